"""``specchat serve``: the OpenAI-compatible API on localhost, with uvicorn."""

from __future__ import annotations

import ipaddress
import sys
from pathlib import Path

from desktop_app.engine.api import API_HOST, API_PORT, DEFAULT_SPEC_MODE, SpecMode
from desktop_app.server.api_key import readable_by_others
from desktop_app.server.app import create_app
from desktop_app.server.backend import EngineBackend
from desktop_app.server.http_server import base_url, host_text, make_server


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exposure_warning(host: str, api_key: str | None) -> str | None:
    """What to say when the API is reachable from other machines (None on loopback)."""
    if is_loopback(host):
        return None
    return f"serving on {host_text(host)}: other machines on the network can use this model" + (
        "" if api_key else " without a key (set --api-key-file or SPECCHAT_API_KEY)"
    )


def serve(
    engine: object,
    host: str = API_HOST,
    port: int = API_PORT.default,
    api_key: str | None = None,
    default_spec: SpecMode = DEFAULT_SPEC_MODE,
    key_file: Path | None = None,
) -> int:
    warning = exposure_warning(host, api_key)
    if warning:
        print(f"specchat: warning: {warning}", file=sys.stderr)
    if key_file is not None and readable_by_others(key_file):
        print(
            f"specchat: warning: other users of this computer can read the API key file {key_file} (chmod 600 it)",
            file=sys.stderr,
        )
    backend = EngineBackend(engine, prepare_auto=default_spec is SpecMode.AUTO)  # type: ignore[arg-type]
    print(
        f"specchat: serving {', '.join(m.id for m in backend.served_models())} at {base_url(host, port)}"
        + (" (API key required)" if api_key else ""),
        file=sys.stderr,
    )
    try:
        make_server(create_app(backend, api_key, default_spec=default_spec), host, port).run()
    finally:
        backend.close()
    return 0
