"""A worker killed mid-answer: one clear error, the partial answer kept, and the engine usable
again once the models are reloaded on this computer. Each test starts its own workers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.remote.workers import start_worker


def test_the_command_line_says_which_worker_was_lost(models: Any, tmp_path: Path) -> None:
    workers = [start_worker(tmp_path), start_worker(tmp_path)]
    try:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "desktop_app",
                "generate",
                "--target",
                str(models.target),
                "--prompt",
                "Hello",
                "--workers",
                ",".join(str(w.address) for w in workers),
                "--max-tokens",
                "4000",
                "--spec",
                "off",
                "--threads",
                "1",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdout is not None
        first = process.stdout.read(40)  # the answer is streaming
        workers[0].kill()
        rest, err = process.communicate(timeout=60)
    finally:
        for worker in workers:
            worker.kill()
    assert len(first) == 40 and process.returncode == 75
    lines = err.decode().strip().splitlines()
    assert lines[-1] == (
        f"specchat: error: Lost the connection to worker {workers[0].address} (it stopped, or the "
        "network dropped); the answer above is incomplete"
    )
    assert sum("error" in line for line in lines) == 1
    assert f"spread over this computer: 2 layers, {workers[0].address}: 2 layers" in err.decode()
