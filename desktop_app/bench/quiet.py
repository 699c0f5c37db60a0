"""What a benchmark on a shared machine needs: wait until the CPUs are idle, and make them busy
on purpose (``python -c "while True: pass"`` processes, as another program would)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

QUIET_BUSY = 0.25  # the machine counts as idle below this share of all CPU time in use
# One core kept busy until this process ends, even if it ends without cleaning up (killed).
BUSY_LOOP = "import os\nparent = os.getppid()\nwhile os.getppid() == parent: pass"


def _cpu_times() -> tuple[int, int]:
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_share(sample_s: float = 0.5) -> float:
    """The share of all CPU time in use over ``sample_s`` (0 where /proc/stat is missing)."""
    try:
        busy0, total0 = _cpu_times()
        time.sleep(sample_s)
        busy1, total1 = _cpu_times()
    except OSError:
        return 0.0
    return (busy1 - busy0) / max(total1 - total0, 1)


def wait_for_quiet(limit_s: float) -> float:
    """Wait (at most ``limit_s``) until other programs leave the CPUs idle; returns the last share."""
    deadline = time.monotonic() + limit_s
    share = busy_share()
    while share > QUIET_BUSY and time.monotonic() < deadline:
        share = busy_share()
    return share


@contextmanager
def busy_processes(n: int) -> Iterator[None]:
    """``n`` processes each keeping one core busy, for the duration of the block."""
    procs = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(n)]
    try:
        if procs:
            time.sleep(0.5)  # let the scheduler settle them
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()
