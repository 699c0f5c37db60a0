"""Jobs for the library's child processes (desktop_app/library/child.py: the vocabulary checks of
vocab.py, the GPU memory measure of fit.py) that crash them for real, in native code, the way a
file (or a driver) that breaks llama.cpp would."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from desktop_app.engine import PairCheck
from desktop_app.engine import check_pairs as engine_check_pairs


def segfault() -> None:
    ctypes.string_at(0)  # reads address 0: SIGSEGV in C, as a llama.cpp bug would


def check_pairs(
    paths: Sequence[str | Path], pairs: Sequence[tuple[int, int]], step: Callable[[tuple[int, ...]], None] | None = None
) -> list[PairCheck]:
    """The engine's check_pairs, except that loading a file named crash-*.gguf, or comparing a
    pair whose draft is named pair-crash-*.gguf, crashes the process."""

    def watching(at: tuple[int, ...]) -> None:
        if step is not None:
            step(at)
        name = Path(paths[at[-1]]).name
        if (len(at) == 1 and name.startswith("crash-")) or (len(at) == 2 and name.startswith("pair-crash-")):
            segfault()

    return engine_check_pairs(paths, pairs, watching)


def checker_pid() -> int:
    return os.getpid()
