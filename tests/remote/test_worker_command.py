"""`specchat worker`: llama.cpp's RPC server, on localhost unless told otherwise, with a warning."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.remote.workers import RunningWorker


def test_a_worker_warns_and_serves_this_computer_only(two_workers: list[RunningWorker]) -> None:
    worker = two_workers[0]
    out = worker.output()
    assert "no authentication and no encryption" in out and "Serve only a trusted network" in out
    assert f"specchat worker: serving on 127.0.0.1:{worker.address.port} (llama.cpp's RPC server listens" in out
    assert "endpoint       : 127.0.0.1:" in out  # llama.cpp's own server, behind the gate on a loopback port
    assert "beyond this computer" not in out


def test_a_second_worker_on_a_taken_port_says_so(two_workers: list[RunningWorker], tmp_path: Path) -> None:
    taken = two_workers[1].address.port
    result = subprocess.run(
        [sys.executable, "-m", "desktop_app", "worker", "--port", str(taken)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"specchat: error: the worker could not listen on 127.0.0.1:{taken} (is the port in use, or the address "
        "not this computer's?)"
    )


def test_a_bad_port_is_refused_before_anything_starts() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "desktop_app", "worker", "--port", "70000"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1 and "worker_port must be between 1 and 65535" in result.stderr
