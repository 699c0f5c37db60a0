"""The GPU memory figure (fit.measure_memory(with_gpu=True)) is llama.cpp's, read in a child
process: the same figure as read in this process, the caller never loads llama.cpp, and a crash
there is an error that says so instead of a dead window."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from desktop_app.library import fit
from desktop_app.library.child import in_child
from desktop_app.library.errors import CheckerCrashed
from desktop_app.library.fit import MachineMemory, biggest_gpu_memory, measure_memory


def test_the_gpu_memory_is_read_in_a_child_and_is_the_same_as_here() -> None:
    assert in_child("tests.library.crashing_checker:checker_pid") != os.getpid()
    here = biggest_gpu_memory()  # llama.cpp in this (the test's) process

    assert in_child(fit.JOB_GPU_MEMORY) == here
    assert measure_memory(with_gpu=True) == MachineMemory(int(psutil.virtual_memory().total), here)


def test_the_callers_process_never_loads_llama_cpp(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from desktop_app.library.fit import measure_memory\n"
        "if __name__ == '__main__':\n"
        "    memory = measure_memory(with_gpu=True)\n"
        "    print(memory.ram_bytes > 0, sorted(m for m in sys.modules if m.startswith('llama_cpp')))\n"
    )
    script = tmp_path / "memory.py"
    script.write_text(code)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180)

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "[]"]


def test_a_crash_while_measuring_is_an_error_that_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("desktop_app.library.fit.JOB_GPU_MEMORY", "tests.library.crashing_checker:segfault")

    with pytest.raises(CheckerCrashed, match=r"could not measure the GPU memory: .*\(killed by SIGSEGV\)"):
        measure_memory(with_gpu=True)
    assert measure_memory() == MachineMemory(int(psutil.virtual_memory().total))  # the RAM alone still is
