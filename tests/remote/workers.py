"""Real `specchat worker` processes on 127.0.0.1 for the remote tests."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from desktop_app.engine.errors import WorkerError
from desktop_app.engine.workers import WorkerAddress

START_TIMEOUT_S = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class RunningWorker:
    address: WorkerAddress
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)


def start_worker(directory: Path, threads: int = 1) -> RunningWorker:
    """``specchat worker`` on a free localhost port, returned once it answers the handshake."""
    from desktop_app.engine.llama import rpc

    port = free_port()
    log = directory / f"worker-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "desktop_app", "worker", "--port", str(port), "--threads", str(threads)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    worker = RunningWorker(WorkerAddress("127.0.0.1", port), process, log)
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if process.poll() is not None:
            raise AssertionError(f"the worker exited ({process.returncode}): {worker.output()}")
        try:
            rpc.probe(worker.address, timeout_s=2.0)
            return worker
        except WorkerError:
            if time.monotonic() > deadline:
                worker.kill()
                raise AssertionError(
                    f"the worker did not start in {START_TIMEOUT_S:.0f} s: {worker.output()}"
                ) from None
            time.sleep(0.1)
