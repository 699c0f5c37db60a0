"""The decoding speed of each model this machine has run, remembered across processes.

The model library predicts how fast a model it has not run yet would decode here
(:mod:`desktop_app.library.speed`, docs/speed-advice.md): decoding reads every weight once per
token, so a machine's *effective bandwidth* (bytes of weights read per second) carries over from
one model to the next. It learns that figure from these: per model file, its size and the best
plain-decoding speed its answers reached on this machine.

An answer counts when it decoded plainly: its tokens over its decoding seconds when nothing was
drafted, otherwise its one-token passes (speculation's gain is not the memory's). The best figure
is kept, not the last: a busy machine or a short answer only makes a run slower than its bytes
say, never faster. Runs whose layers sit on a GPU are kept apart from runs on the CPU.

The file is a :class:`~desktop_app.engine.kept_figures.KeptFigures` in the data folder (a
damaged file or a read-only folder is said once and otherwise ignored). No llama.cpp, no Qt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from desktop_app.engine.kept_figures import Entry, KeptFigures
from desktop_app.engine.stats import MIN_PLAIN_PASSES, GenerationStats

MEMORY_VERSION = 1
MIN_TOKENS = 16  # an answer shorter than this says more about its start-up than about decoding
MAX_TOKENS_S = 1e5  # a figure above this is not a measurement


@dataclass(frozen=True)
class MeasuredSpeed:
    """One model's best plain-decoding speed here: ``file_bytes`` read per token at ``tokens_s``."""

    name: str
    file_bytes: int
    tokens_s: float
    on_gpu: bool

    @property
    def bandwidth_gb_s(self) -> float:
        """The effective bandwidth this run shows: its file's bytes times its tokens per second."""
        return self.file_bytes * self.tokens_s / 1e9


def plain_speed(stats: GenerationStats) -> float | None:
    """The answer's plain-decoding tokens per second, None when it says too little: its decoding
    speed when nothing was drafted, else its one-token passes' speed."""
    if not stats.drafted and stats.generated_tokens >= MIN_TOKENS and stats.decode_s > 0:
        return stats.decode_tokens_per_s
    if stats.plain_passes >= MIN_PLAIN_PASSES and stats.plain_s > 0:
        return stats.plain_passes / stats.plain_s
    return None


def _valid(entry: Entry) -> bool:
    size, speed = entry.get("file_bytes"), entry.get("tokens_s")
    return (
        type(size) is int
        and size > 0
        and isinstance(speed, int | float)
        and 0 < speed < MAX_TOKENS_S
        and isinstance(entry.get("name"), str)
        and isinstance(entry.get("on_gpu"), bool)
    )


class ModelSpeeds:
    """The file of measured speeds (``path`` is called on first use; see KeptFigures);
    ``machine`` is this computer's fingerprint (measured on first use)."""

    def __init__(self, path: Callable[[], Path], machine: str | None = None) -> None:
        self._file = KeptFigures(path, "model speeds", "speeds", MEMORY_VERSION, _valid)
        self._machine = machine

    @property
    def machine(self) -> str:
        if self._machine is None:
            from desktop_app.engine.llama.thread_memory import machine_fingerprint  # no llama.cpp there

            self._machine = machine_fingerprint()
        return self._machine

    def remember(self, model: Path, file_bytes: int, on_gpu: bool, stats: GenerationStats) -> float | None:
        """Keep the answer's plain speed for ``model`` if it beats the one kept; the speed or None."""
        speed = plain_speed(stats)
        if speed is None or file_bytes <= 0 or speed >= MAX_TOKENS_S:
            return None
        key = f"{self.machine}/{model.name}/{file_bytes}/{'gpu' if on_gpu else 'cpu'}"
        kept = self._file.get(key)
        if kept is None or speed > kept["tokens_s"]:
            self._file.put(key, {"name": model.name, "file_bytes": file_bytes, "tokens_s": speed, "on_gpu": on_gpu})
        return speed

    def measured(self) -> list[MeasuredSpeed]:
        """Every model's kept figure on this machine."""
        prefix = f"{self.machine}/"
        return [
            MeasuredSpeed(e["name"], e["file_bytes"], float(e["tokens_s"]), e["on_gpu"])
            for key, e in self._file.entries().items()
            if key.startswith(prefix)
        ]
