"""How fast a model would decode on this machine: its predicted tokens per second.

One mechanism (docs/speed-advice.md): decoding one token reads every weight of the model once
(a mixture of experts: its active share), so it is bound by how many bytes per second the
machine reads::

    tokens/s  ~  effective bandwidth / bytes read per token

That *effective bandwidth* is learned from the largest model this machine has run, if it had at
least :data:`TEACHING_BYTES` (the engine keeps each model's best plain-decoding speed:
:mod:`desktop_app.engine.model_speeds`); until then it is :data:`DECODE_SHARE` of a quick
measurement of the machine's memory read speed (:func:`read_bandwidth_gb_s`), and where that
cannot be taken :data:`DEFAULT_BANDWIDTH_GB_S`. A model is fast enough to suggest at
:data:`FAST_ENOUGH_TOKENS_S`. No Qt, no llama.cpp.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

from desktop_app import paths
from desktop_app.engine.model_speeds import MeasuredSpeed, ModelSpeeds
from desktop_app.library.catalog import CatalogPair
from desktop_app.library.child import ChildDied, in_child

# Why these figures: docs/speed-advice.md ("The constants").
FAST_ENOUGH_TOKENS_S = 5.0  # about reading speed: slower answers are waited for, not read along
TEACHING_BYTES = 500_000_000  # a smaller model's speed says more about per-token overheads than bandwidth
DECODE_SHARE = 0.7  # decoding also dequantizes and multiplies: it reads at part of the memory's speed
DEFAULT_BANDWIDTH_GB_S = 5.0  # when the read cannot be measured: a two-core CPU-only machine's figure
READ_BYTES = 128 * 2**20  # the quick measurement's buffer: larger than most CPU caches
READ_PASSES = 3


@dataclass(frozen=True)
class SpeedGuess:
    """This machine's effective bandwidth and where the figure comes from (``measured``: the
    model it was learned from; else ``read``: the quick measurement; else the default)."""

    bandwidth_gb_s: float = DEFAULT_BANDWIDTH_GB_S
    measured: str = ""
    read: bool = False

    def tokens_per_s(self, bytes_per_token: int) -> float:
        """The predicted plain-decoding speed of a model that reads ``bytes_per_token``."""
        return self.bandwidth_gb_s * 1e9 / max(bytes_per_token, 1)

    def of_pair(self, pair: CatalogPair) -> float:
        """A catalog pair's target decoding plainly (drafting may add to it)."""
        return self.tokens_per_s(pair.target.bytes_per_token)

    def fast_enough(self, pair: CatalogPair) -> bool:
        return self.of_pair(pair) >= FAST_ENOUGH_TOKENS_S

    def basis(self) -> str:
        """Where the figure comes from, in a sentence."""
        if self.measured:
            return f"{self.bandwidth_gb_s:.1f} GB/s, learned from {self.measured} on this machine"
        if self.read:
            return (
                f"{self.bandwidth_gb_s:.1f} GB/s, {DECODE_SHARE:.0%} of this machine's memory read speed"
                " (no large model has run here yet)"
            )
        return f"a cautious default of {self.bandwidth_gb_s:.1f} GB/s (the memory's speed could not be measured)"


def speed_text(tokens_s: float) -> str:
    """``about 6 tokens/s here``; with its decimal a figure under 2 (``about 0.3 tokens/s here``)
    and one just under FAST_ENOUGH_TOKENS_S, which would round up to it (``about 4.6``, slow,
    never shown as ``about 5`` beside a fast-enough 5)."""
    rounds_up_to_fast = tokens_s < FAST_ENOUGH_TOKENS_S <= round(tokens_s)
    figure = f"{tokens_s:.1f}" if tokens_s < 2 or rounds_up_to_fast else f"{tokens_s:.0f}"
    return f"about {figure} tokens/s here"


def learned(measured: Iterable[MeasuredSpeed], before: SpeedGuess, on_gpu: bool = False) -> SpeedGuess:
    """The figure the models measured here give: the largest model's of at least TEACHING_BYTES
    (its per-token overheads weigh least against its bytes; ties: the faster); ``before`` when
    none that large ran."""
    runs = [m for m in measured if m.on_gpu == on_gpu and m.file_bytes >= TEACHING_BYTES]
    if not runs:
        return before
    best = max(runs, key=lambda m: (m.file_bytes, m.tokens_s))
    return SpeedGuess(best.bandwidth_gb_s, best.name)


def measure_read_gb_s() -> float | None:
    """The quick measurement: how fast one core reads a buffer larger than its caches, in GB/s
    (the best of READ_PASSES sums; ~0.2 s, in a short-lived child: numpy, like llama.cpp, stays
    out of the window's process). None when it cannot be taken."""
    try:
        result = in_child("desktop_app.library.speed:read_in_child", name="specchat-read-speed")
    except (ChildDied, OSError):
        return None
    return float(result) if isinstance(result, (int, float)) else None


def read_in_child() -> float | None:
    """:func:`measure_read_gb_s`'s work, in the child."""
    import numpy as np

    try:
        data = np.ones(READ_BYTES // 4, dtype=np.float32)
    except MemoryError:
        return None
    data.sum()  # the pages are touched once before timing
    best = 0.0
    for _ in range(READ_PASSES):
        start = time.perf_counter()
        data.sum()
        best = max(best, READ_BYTES / max(time.perf_counter() - start, 1e-9))
    return best / 1e9


_READ_LOCK = threading.Lock()
_READ: list[float | None] = []  # the process's measurement, once taken


def read_bandwidth_gb_s() -> float | None:
    """:func:`measure_read_gb_s`, once per process (a second caller waits for the first's)."""
    with _READ_LOCK:
        if not _READ:
            _READ.append(measure_read_gb_s())
        return _READ[0]


def start_read_measurement() -> None:
    """Take the quick measurement in the background now, so a window need not wait ~0.2 s for it."""
    threading.Thread(target=read_bandwidth_gb_s, name="specchat-read-speed", daemon=True).start()


def before_any_run() -> SpeedGuess:
    """The figure before a large enough model has run here: the quick measurement, else the default."""
    read = read_bandwidth_gb_s()
    return SpeedGuess(read * DECODE_SHARE, read=True) if read else SpeedGuess()


def kept_speeds(speeds: ModelSpeeds | None = None) -> list[MeasuredSpeed]:
    """The speeds the engine kept for the models run on this machine (none without a data folder)."""
    try:
        return (speeds or ModelSpeeds(paths.model_speeds_file)).measured()
    except OSError:
        return []


def machine_speed(on_gpu: bool = False, speeds: ModelSpeeds | None = None) -> SpeedGuess:
    """This machine's figure from the speeds kept in the data folder (:func:`before_any_run`'s
    when none teaches it)."""
    return learned(kept_speeds(speeds), before_any_run(), on_gpu)


def file_speed_text(name: str, file_bytes: int, guess: SpeedGuess, kept: Iterable[MeasuredSpeed]) -> str:
    """A local file's speed here: what it measured when it ran here (on the CPU), else predicted."""
    for run in kept:
        if (run.name, run.file_bytes, run.on_gpu) == (name, file_bytes, False):
            return (
                f"{run.tokens_s:.1f} tokens/s here (measured)"
                if run.tokens_s < 2
                else f"{run.tokens_s:.0f} tokens/s here (measured)"
            )
    return speed_text(guess.tokens_per_s(file_bytes))
