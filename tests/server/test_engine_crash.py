"""`specchat serve` outlives its engine: kill -9 of the engine's process while requests wait, and
they are answered 503 with the reason at once, the server stays up, a fresh engine loads the same
model, and the next request is answered. The real command, the real engine process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx

from tests.server.live_server import free_port


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _engine_pid(server_pid: int) -> int:
    """The engine's process: the child of the server that runs multiprocessing's spawned main."""
    for child in _children(server_pid):
        command = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
        if b"multiprocessing" in command and b"resource_tracker" not in command:
            return child
    raise AssertionError(f"no engine process under {server_pid}: {_children(server_pid)}")


def _wait_serving(base: str, deadline_s: float = 120) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/v1/models", timeout=2).json().get("data"):
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError("the server did not serve a model in time")


def test_serve_survives_kill_9_of_its_engine(models: Any, tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = (tmp_path / "serve.log").open("w+")
    command = [sys.executable, "-m", "desktop_app", "serve", "--target", str(models.target), "--spec", "off"]
    server = subprocess.Popen([*command, "--port", str(port)], stderr=log, text=True)
    try:
        _wait_serving(base)
        body = {"messages": [{"role": "user", "content": "Tell me a long story."}], "max_tokens": 4000}
        replies: list[httpx.Response] = []
        asking = [
            threading.Thread(
                target=lambda: replies.append(httpx.post(f"{base}/v1/chat/completions", json=body, timeout=120))
            )
            for _ in range(2)  # one running, one waiting behind it
        ]
        for thread in asking:
            thread.start()
        time.sleep(1.0)
        engine = _engine_pid(server.pid)
        os.kill(engine, signal.SIGKILL)
        for thread in asking:
            thread.join(timeout=30)
        assert len(replies) == 2
        for reply in replies:
            if reply.status_code == 200:  # the answer was short enough to end before the kill
                continue
            assert reply.status_code == 503, reply.text
            assert "was killed (SIGKILL" in reply.json()["error"]["message"], reply.text
        assert any(reply.status_code == 503 for reply in replies)
        assert server.poll() is None  # the server lives on
        _wait_serving(base)  # a fresh engine has loaded the model again
        assert _engine_pid(server.pid) != engine
        again = httpx.post(f"{base}/v1/chat/completions", json={**body, "max_tokens": 4}, timeout=120)
        assert again.status_code == 200, again.text
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    log.seek(0)
    said = log.read()
    assert "was killed (SIGKILL" in said and "restarting it" in said and "serving again" in said, said
    assert "Traceback" not in said, said
