"""The thread count measured for a model on this machine, remembered across processes.

A fresh process would otherwise pay the thread trial again (:mod:`threads`): a one-shot answer
on a busy machine starts at the most threads, stalls on the core another process holds, and
spends its first passes timing each count. So each count a trial or a calibration keeps is
written down per machine, model and *load* (how many cores other processes keep busy when it
was measured), and the next process that finds the same load starts at it. A different load
finds no figure and measures, as before; a figure that proves wrong is replaced by the next
trial's (the tuner still probes; docs/threads.md gives the rule).

The file is a :class:`~desktop_app.engine.kept_figures.KeptFigures` in the data folder: a
damaged or unreadable file, or a data folder that cannot be written, is said in one line and
otherwise ignored (the tuner then measures, as it always could). No llama.cpp here, no Qt.
"""

from __future__ import annotations

import hashlib
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from desktop_app.engine.api import ModelOptions
from desktop_app.engine.kept_figures import KeptFigures
from desktop_app.engine.llama.gguf_file import GGUFInfo
from desktop_app.engine.llama.threads import Remembered, ThreadReason

MEMORY_VERSION = 1
LOAD_SAMPLES = 5  # run-queue snapshots whose median is the load (a wake-up now and then is not load)
LOAD_SAMPLE_GAP_S = 0.002


# ---------------------------------------------------------------------- the load
def _own_running_threads() -> int:
    """This process's threads that are running or waiting for a core now (Linux)."""
    running = 0
    for task in os.scandir("/proc/self/task"):
        try:
            with open(f"{task.path}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:  # the thread ended meanwhile
            continue
        if stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3] == b"R":
            running += 1
    return running


def _others_running() -> int:
    """Threads of other processes that are running or want a core now (Linux: the kernel's run
    queue, /proc/stat's ``procs_running``, less this process's own)."""
    with open("/proc/stat", "rb") as handle:
        for line in handle:
            if line.startswith(b"procs_running "):
                return max(0, int(line.split()[1]) - _own_running_threads())
    raise OSError("/proc/stat has no procs_running")


def busy_cores(cores: int | None = None) -> int:
    """How many cores other processes keep busy now, 0 to ``cores``.

    Counted as demand, not as the share they got: a busy loop wants its core whether or not our
    threads took it, so the figure is the same before a trial, during it and after it. On Linux
    the median of a few run-queue snapshots; elsewhere the one-minute load average (psutil's,
    which counts this process too)."""
    cores = cores or os.cpu_count() or 1
    try:
        samples = []
        for i in range(LOAD_SAMPLES):
            if i:
                time.sleep(LOAD_SAMPLE_GAP_S)
            samples.append(_others_running())
        busy = statistics.median_low(samples)
    except (OSError, ValueError):  # not Linux, or a /proc that says something else
        busy = round(psutil.getloadavg()[0])
    return min(max(busy, 0), cores)


# ---------------------------------------------------------------------- what a figure is for
def machine_fingerprint() -> str:
    """This computer as far as thread counts go: its name, processor and the cores we may use."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 1
    processor = platform.processor()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            processor = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), "")
    except OSError:
        pass
    return _digest(platform.node(), platform.machine(), processor, os.cpu_count(), usable)


def model_fingerprint(info: GGUFInfo, options: ModelOptions) -> str:
    """A model as far as thread counts go: its file (architecture, size, parameters,
    quantization) and where its layers compute (GPU layers, workers)."""
    return _digest(
        info.path.name,
        info.architecture,
        info.file_size,
        info.n_parameters,
        info.quantization,
        options.n_gpu_layers,
        *(str(w) for w in options.workers),
    )


def _digest(*parts: object) -> str:
    return hashlib.sha256("\0".join(map(str, parts)).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------- the file
class ThreadMemory:
    """The file of remembered counts. ``path`` is called on first use (the data folder may be
    missing or read-only: said once, then the memory is off); ``busy`` says the load now."""

    def __init__(
        self,
        path: Callable[[], Path],
        busy: Callable[[], int] = busy_cores,
        machine: str | None = None,
    ) -> None:
        self._file = KeptFigures(path, "thread counts", "counts", MEMORY_VERSION, _valid)
        self.busy = busy
        self._machine = machine

    @property
    def machine(self) -> str:
        if self._machine is None:
            self._machine = machine_fingerprint()
        return self._machine

    def for_model(self, model: str) -> ModelThreads:
        """The memory of one model's counts on this machine (what a thread tuner is given)."""
        return ModelThreads(self, model)

    def recall(self, model: str, busy: int) -> Remembered | None:
        entry = self._file.get(self._key(model, busy))
        return Remembered(entry["threads"], ThreadReason[entry["reason"]]) if entry is not None else None

    def remember(self, model: str, busy: int, count: int, reason: ThreadReason) -> None:
        key = self._key(model, busy)
        entry = self._file.get(key)
        if entry is not None and (entry["threads"], entry["reason"]) == (count, reason.name):
            return  # nothing new: no write
        self._file.put(key, {"threads": count, "reason": reason.name})

    def _key(self, model: str, busy: int) -> str:
        return f"{self.machine}/{model}/busy {busy}"


def _valid(entry: dict[str, Any]) -> bool:
    return (
        type(entry.get("threads")) is int and entry["threads"] >= 1 and entry.get("reason") in ThreadReason.__members__
    )


@dataclass(frozen=True)
class ModelThreads:
    """One model's remembered counts, at the load there is now (the tuner's ``memory``)."""

    memory: ThreadMemory
    model: str

    def recall(self) -> Remembered | None:
        return self.memory.recall(self.model, self.memory.busy())

    def remember(self, count: int, reason: ThreadReason) -> None:
        self.memory.remember(self.model, self.memory.busy(), count, reason)

    def busy(self) -> int:
        return self.memory.busy()
