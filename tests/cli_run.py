"""Run the ``specchat`` command line as users run it: a real subprocess."""

from __future__ import annotations

import subprocess
import sys


def specchat(*args: str, timeout: int = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "desktop_app", *args], capture_output=True, text=True, timeout=timeout)
