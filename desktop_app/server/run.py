"""``specchat serve``: the OpenAI-compatible API on localhost, with uvicorn, over the engine's
child process (a llama.cpp crash ends that process, never the server: it loads the models again)."""

from __future__ import annotations

import ipaddress
import sys
from pathlib import Path

from desktop_app.engine.api import API_HOST, API_PORT, DEFAULT_SPEC_MODE, SpecMode
from desktop_app.engine_process.client import EngineProcess
from desktop_app.engine_process.protocol import EngineEvent, Loaded
from desktop_app.server.api_key import readable_by_others
from desktop_app.server.app import create_app
from desktop_app.server.engine_backend import EngineBackend
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


class _CrashLog:
    """Says on stderr when the engine process died and when it is serving again."""

    def __init__(self) -> None:
        self.crashed = False

    def on_event(self, run: int, event: EngineEvent) -> None:
        if isinstance(event, Loaded) and self.crashed:
            self.crashed = False
            print("specchat: the engine is serving again", file=sys.stderr, flush=True)

    def on_ended(self, run: int, reason: str) -> None:
        self.crashed = True
        print(f"specchat: error: {reason}; restarting it", file=sys.stderr, flush=True)


def serve(
    engine: EngineProcess,
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
    engine.listen(_CrashLog())
    backend = EngineBackend(engine, restart_after_crash=True)
    print(
        f"specchat: serving {', '.join(m.id for m in backend.served_models())} at {base_url(host, port)}"
        + (" (API key required)" if api_key else ""),
        file=sys.stderr,
    )
    try:
        make_server(create_app(backend, api_key, default_spec=default_spec), host, port).run()
    finally:
        backend.close()
        engine.shutdown()
    return 0
