"""The remote benchmark's delaying relay, and the benchmark end to end on a factory target."""

from __future__ import annotations

import json
import socket
import socketserver
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from desktop_app.engine.api import WorkerAddress
from lab.remote import DelayRelay

ROOT = Path(__file__).resolve().parents[2]  # where the lab package sits, not installed with the app


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(4096):
            self.request.sendall(data)


def _round_trip(address: WorkerAddress, payload: bytes) -> tuple[float, bytes]:
    with socket.create_connection((address.host, address.port)) as sock:
        start = time.perf_counter()
        sock.sendall(payload)
        got = b""
        while len(got) < len(payload):
            got += sock.recv(65536)
        return time.perf_counter() - start, got


def test_the_relay_adds_its_delay_to_every_round_trip_and_keeps_the_bytes() -> None:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    relay = DelayRelay(WorkerAddress("127.0.0.1", server.server_address[1]), round_trip_s=0.05)
    try:
        payload = bytes(range(256)) * 1000
        elapsed, echoed = _round_trip(relay.address, payload)
        assert echoed == payload
        assert elapsed >= 0.05
    finally:
        relay.close()
        server.shutdown()
        server.server_close()


def test_the_remote_benchmark_reports_each_delay(models: Any, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts.json"
    prompts.write_text(json.dumps({"rewrite": ["Repeat: one two three four five."]}), encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "lab",
            "remote",
            "--target",
            str(models.target),
            "--prompts",
            str(prompts),
            "--max-tokens",
            "16",
            "--out",
            str(tmp_path / "out"),
            "--draft-max",
            "4",
            "--repeats",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "out" / "remote.json").read_text())
    assert [row["delay_ms"] for row in report["rows"]] == [0.0, 2.0, 10.0]
    for row in report["rows"]:  # one prompt, one round: the speed-up is the ratio of the two speeds
        assert row["runs"] == 1 and row["off_tok_s"] > 0
        assert row["speedup"] == pytest.approx(row["auto_tok_s"] / row["off_tok_s"])
    assert (tmp_path / "out" / "remote.md").read_text().count("\n| ") == 3
