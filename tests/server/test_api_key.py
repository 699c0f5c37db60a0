"""The API key from a file, the environment or the command line, in the documented order; a
key source that cannot be used stops `specchat serve` with one line, before the model loads."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from desktop_app.server.api_key import KEY_ENV, ApiKeyError, resolve_api_key
from tests.server.live_server import free_port


def test_the_order_is_file_then_command_line_then_environment(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text("from-file\n")
    env = {KEY_ENV: " from-env "}
    assert resolve_api_key("from-flag", key_file, env) == "from-file"
    assert resolve_api_key("from-flag", None, env) == "from-flag"
    assert resolve_api_key(None, None, env) == "from-env"
    assert resolve_api_key(None, None, {}) is None


@pytest.mark.parametrize(
    "content,words",
    [
        (None, "cannot read the API key file"),
        ("", "is empty"),
        ("  \n", "is empty"),
        ("a\nb\n", "more than one line"),
        ("\x00key", "printable ASCII"),
    ],
)
def test_an_unusable_key_file_is_a_clear_error(tmp_path: Path, content: str | None, words: str) -> None:
    key_file = tmp_path / "key"
    if content is not None:
        key_file.write_text(content)
    with pytest.raises(ApiKeyError, match=words):
        resolve_api_key(None, key_file, {})


def test_an_empty_environment_variable_is_an_error_not_no_key() -> None:
    with pytest.raises(ApiKeyError, match=f"{KEY_ENV} is set but empty"):
        resolve_api_key(None, None, {KEY_ENV: ""})


def _serve(models: Any, port: int, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    environ = {k: v for k, v in os.environ.items() if k != KEY_ENV} | (env or {})
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "desktop_app",
            "serve",
            "--target",
            str(models.target),
            "--port",
            str(port),
            "--threads",
            "1",
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environ,
    )


@pytest.mark.parametrize("args", [["--api-key-file", "/nonexistent/key"], ["--api-key", ""]])
def test_serve_with_an_unusable_key_says_so_in_one_line(models: Any, args: list[str]) -> None:
    server = _serve(models, free_port(), *args)
    _, err = server.communicate(timeout=60)
    assert server.returncode == 1
    assert err.count("\n") == 1 and err.startswith("specchat: error:") and "Traceback" not in err


@pytest.fixture()
def key_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "api-key"
    path.write_text("secret-from-file\n")
    path.chmod(0o600)
    yield path


@pytest.mark.parametrize("source", ["file", "env"])
def test_serve_requires_the_key_from_a_file_or_the_environment(models: Any, key_file: Path, source: str) -> None:
    port = free_port()
    if source == "file":
        server, key = _serve(models, port, "--api-key-file", str(key_file)), "secret-from-file"
    else:
        server, key = _serve(models, port, env={KEY_ENV: "secret-from-env"}), "secret-from-env"
    url = f"http://127.0.0.1:{port}/v1/models"
    try:
        deadline = time.time() + 120
        while True:
            try:
                anonymous = httpx.get(url, timeout=5)
                break
            except httpx.TransportError:
                assert server.poll() is None and time.time() < deadline, server.stderr and server.stderr.read()
                time.sleep(0.2)
        assert anonymous.status_code == 401
        assert httpx.get(url, headers={"Authorization": f"Bearer {key}"}, timeout=5).status_code == 200
        assert key not in " ".join(server.args)  # nothing on the command line for `ps` to show
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert "(API key required)" in err and "can read the API key file" not in err
