"""Which catalog pairs fit this machine: its memory, measured, against each pair's RAM/VRAM need.

A pair fits when its need (:attr:`CatalogPair.ram_gb`: both files, the KV cache at the catalog's
context, buffers) is at most the larger of the machine's RAM and its biggest GPU's memory. The
welcome card suggests a pair that fits with room to spare (:data:`COMFORT_SHARE` of that memory),
so the system and the user's other programs keep theirs, and, given the machine's predicted speed
(:mod:`desktop_app.library.speed`), one that decodes fast enough to read along.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import psutil

from desktop_app.library.catalog import CatalogPair
from desktop_app.library.child import ChildDied, in_child
from desktop_app.library.errors import CheckerCrashed
from desktop_app.library.speed import SpeedGuess

COMFORT_SHARE = 0.8  # a suggested pair leaves a fifth of the memory to everything else
SUGGESTED_USE = "chat"  # the welcome card suggests an everyday chat pair
JOB_GPU_MEMORY = "desktop_app.library.fit:biggest_gpu_memory"  # run by measure_memory in a child


@dataclass(frozen=True)
class MachineMemory:
    """This machine's memory in bytes; ``vram_bytes`` is None when llama.cpp reports no GPU."""

    ram_bytes: int
    vram_bytes: int | None = None

    @property
    def usable_gb(self) -> float:
        """What one pair may use: all of the RAM, or all of the biggest GPU's memory."""
        return max(self.ram_bytes, self.vram_bytes or 0) / 1e9

    def describe(self) -> str:
        """``23.0 GB`` or ``23.0 GB RAM, 24.0 GB GPU memory``."""
        ram = f"{self.ram_bytes / 1e9:.1f} GB"
        return f"{ram} RAM, {self.vram_bytes / 1e9:.1f} GB GPU memory" if self.vram_bytes else ram


def measure_memory(with_gpu: bool = False) -> MachineMemory:
    """The total RAM (psutil) and, when ``with_gpu``, the biggest GPU's memory as llama.cpp
    reports it (:func:`biggest_gpu_memory`, in a short-lived child process: this one never loads
    llama.cpp; a second or two, so off the GUI thread). CheckerCrashed when llama.cpp crashes
    there or stops answering."""
    ram = int(psutil.virtual_memory().total)
    if not with_gpu:
        return MachineMemory(ram)
    try:
        vram: int | None = in_child(JOB_GPU_MEMORY, name="specchat-gpu-memory")
    except ChildDied as crash:
        raise CheckerCrashed(
            f"could not measure the GPU memory: llama.cpp crashed or hung in its child process ({crash.reason});"
            " the fits count the RAM only"
        ) from None
    return MachineMemory(ram, vram)


def biggest_gpu_memory() -> int | None:
    """The biggest GPU's memory in bytes as llama.cpp reports it; None when it reports no GPU.
    This loads llama.cpp: :func:`measure_memory` runs it in a child process."""
    from desktop_app.engine import backend_info

    gpus = [d.memory_total for d in backend_info().devices if d.kind != "cpu" and d.memory_total]
    return max(gpus) if gpus else None


@dataclass(frozen=True)
class PairFit:
    pair: CatalogPair
    fits: bool
    text: str  # "fits: needs ~6.1 GB of 23.0 GB" or "needs ~47.1 GB, this machine has 23.0 GB"


def fit_of(pair: CatalogPair, memory: MachineMemory) -> PairFit:
    if pair.ram_gb <= memory.usable_gb:
        return PairFit(pair, True, f"fits: needs ~{pair.ram_gb:.1f} GB of {memory.describe()}")
    return PairFit(pair, False, f"needs ~{pair.ram_gb:.1f} GB, this machine has {memory.describe()}")


def sort_by_fit(pairs: Iterable[CatalogPair], memory: MachineMemory) -> list[PairFit]:
    """Every pair with its verdict: those that fit first, each group in catalog order."""
    fits = [fit_of(p, memory) for p in pairs]
    return sorted(fits, key=lambda f: not f.fits)  # sorted() is stable


def best_pair(
    pairs: Sequence[CatalogPair], memory: MachineMemory, speed: SpeedGuess | None = None
) -> CatalogPair | None:
    """The chat pair to suggest: the biggest one that needs at most COMFORT_SHARE of the memory
    (bigger models answer better) and, given ``speed``, is predicted fast enough
    (:data:`~desktop_app.library.speed.FAST_ENOUGH_TOKENS_S`); when none is, the fastest that
    fits. None when none fits so."""
    room = memory.usable_gb * COMFORT_SHARE
    fitting = [p for p in pairs if SUGGESTED_USE in p.uses and p.ram_gb <= room]
    if speed is not None:
        fast = [p for p in fitting if speed.fast_enough(p)]
        if not fast:
            return max(fitting, key=speed.of_pair, default=None)
        fitting = fast
    return max(fitting, key=lambda p: p.ram_gb, default=None)
