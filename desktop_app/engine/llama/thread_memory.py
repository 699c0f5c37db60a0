"""The thread count measured for a model on this machine, remembered across processes.

A fresh process would otherwise pay the thread trial again (:mod:`threads`): a one-shot answer
on a busy machine starts at the most threads, stalls on the core another process holds, and
spends its first passes timing each count. So each count a trial or a calibration keeps is
written down per machine, model and *load* (how many cores other processes keep busy when it
was measured), and the next process that finds the same load starts at it. A different load
finds no figure and measures, as before; a figure that proves wrong is replaced by the next
trial's (the tuner still probes; docs/threads.md gives the rule).

The file is a small JSON object in the data folder, written atomically (a temporary file
renamed over it). A damaged or unreadable file, or a data folder that cannot be written, is
said in one line (logging) and otherwise ignored: the tuner then measures, as it always could.
No llama.cpp here, no Qt.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from desktop_app.engine.api import ModelOptions
from desktop_app.engine.llama.gguf_file import GGUFInfo
from desktop_app.engine.llama.threads import Remembered, ThreadReason

log = logging.getLogger(__name__)

MEMORY_VERSION = 1
MAX_ENTRIES = 256  # machine x model x load figures kept; the oldest go first
MAX_FILE_BYTES = 1 << 20  # a file larger than this is not ours (256 entries take about 50 KB)
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
        self._path_of = path
        self.busy = busy
        self._machine = machine
        self._path: Path | None = None
        self._entries: dict[str, dict[str, Any]] | None = None  # None: not read yet
        self._broken = False  # the folder cannot be written: said once, not tried again
        self._damage_said = False  # a damaged file is said once (it is read again before a write)

    @property
    def machine(self) -> str:
        if self._machine is None:
            self._machine = machine_fingerprint()
        return self._machine

    def for_model(self, model: str) -> ModelThreads:
        """The memory of one model's counts on this machine (what a thread tuner is given)."""
        return ModelThreads(self, model)

    def recall(self, model: str, busy: int) -> Remembered | None:
        entry = self._read().get(self._key(model, busy))
        return Remembered(entry["threads"], ThreadReason[entry["reason"]]) if entry is not None else None

    def remember(self, model: str, busy: int, count: int, reason: ThreadReason) -> None:
        key = self._key(model, busy)
        entry = self._read().get(key)
        if entry is not None and (entry["threads"], entry["reason"]) == (count, reason.name):
            return  # nothing new: no write
        self._entries = None  # another process may have written since: merge with what is there now
        entries = self._read()
        entries[key] = {"threads": count, "reason": reason.name, "at": time.time()}
        for old in sorted(entries, key=lambda k: entries[k]["at"])[: max(0, len(entries) - MAX_ENTRIES)]:
            del entries[old]
        self._write(entries)

    def _key(self, model: str, busy: int) -> str:
        return f"{self.machine}/{model}/busy {busy}"

    def _file(self) -> Path | None:
        if self._path is None and not self._broken:
            try:
                self._path = self._path_of()
            except OSError as exc:
                self._off(f"cannot use the data folder ({exc})")
        return self._path

    def _off(self, why: str) -> None:
        log.warning("specchat: thread counts are measured again in each process: %s", why)
        self._broken = True

    def _read(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            self._entries = {}
            path = self._file()
            if path is None:
                return self._entries
            try:
                self._entries = _load(path)
            except _Damaged as exc:
                if not self._damage_said:
                    log.warning("specchat: ignoring the remembered thread counts in %s: %s", path, exc)
                self._damage_said = True
        return self._entries

    def _write(self, entries: dict[str, dict[str, Any]]) -> None:
        path = self._file()
        if path is None:
            return
        text = json.dumps({"version": MEMORY_VERSION, "counts": entries}, indent=1, sort_keys=True)
        try:
            with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=path.name, suffix=".tmp", delete=False) as f:
                tmp = Path(f.name)
                f.write(text)
            try:
                os.replace(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)  # only left when the rename failed
        except OSError as exc:
            self._off(f"cannot write {path} ({exc.strerror or exc})")


class _Damaged(Exception):
    """The file cannot be used: why."""


def _load(path: Path) -> dict[str, dict[str, Any]]:
    """The entries of ``path`` (none when it is missing); raises _Damaged saying why it cannot
    be used."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ValueError(f"larger than {MAX_FILE_BYTES} bytes")
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("version") != MEMORY_VERSION:
            raise ValueError("not a version-1 file of thread counts")
        counts = data["counts"]
        if not isinstance(counts, dict) or not all(_valid(e) for e in counts.values()):
            raise ValueError("an entry is not a count")
        return dict(counts)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError, TypeError) as exc:  # UnicodeDecodeError and JSON's are ValueErrors
        raise _Damaged(str(exc) or type(exc).__name__) from exc


def _valid(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and type(entry.get("threads")) is int
        and entry["threads"] >= 1
        and entry.get("reason") in ThreadReason.__members__
        and isinstance(entry.get("at"), int | float)
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
