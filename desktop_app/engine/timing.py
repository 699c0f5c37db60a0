"""Timing decodes on the live model: what auto mode's cost model is built from."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from desktop_app.engine.model import LlamaModel
from desktop_app.engine.threads import ThreadTuner


class CalibrationInterrupted(Exception):
    """``should_stop`` asked calibration to give way (nothing was cached)."""


def time_decodes(
    model: LlamaModel, sizes: list[int], token: int, depth: int, reps: int,
    should_stop: Callable[[], bool] | None = None,
) -> list[float]:
    """Median seconds for a decode of each batch size (all rows' logits), ``depth`` tokens in.

    Sizes are timed round-robin, as a speculative loop mixes them: llama.cpp reuses its compute
    graph only when the shape repeats, and a real generation pays for rebuilding it. The cache
    is trimmed back afterwards, so a conversation's cached prefix survives.
    """
    base = len(model.kv_tokens)
    samples: dict[int, list[float]] = {b: [] for b in sizes}
    try:
        if base < depth:
            model.prefill(model.kv_tokens + [token] * (depth - base), need_logits=False)
        start_len = len(model.kv_tokens)
        for rep in range(reps + 1):  # the first round warms up
            for b in sizes:
                if should_stop is not None and should_stop():
                    raise CalibrationInterrupted
                t = time.perf_counter()
                model.decode_all_rows([token] * b)
                elapsed = time.perf_counter() - t
                # a recurrent cache gives back all but one row of a decode: it grows by one
                model.truncate(len(model.kv_tokens) - b + 1 if model.is_recurrent else start_len)
                if rep:
                    samples[b].append(elapsed)
        return [statistics.median(samples[b]) for b in sizes]
    finally:
        model.truncate(base)


def tune_threads(
    model: LlamaModel, tuner: ThreadTuner, token: int, depth: int, should_stop: Callable[[], bool] | None = None,
) -> None:
    """Let ``tuner`` time one-token decodes ``depth`` tokens in at each thread count it may use
    (the cache is trimmed back afterwards)."""
    if not tuner.adaptive:
        return
    base = len(model.kv_tokens)
    try:
        if base < depth:
            model.prefill(model.kv_tokens + [token] * (depth - base), need_logits=False)
        start_len = len(model.kv_tokens)

        def one_pass() -> float:
            if should_stop is not None and should_stop():
                raise CalibrationInterrupted
            t = time.perf_counter()
            model.decode_one(token)
            elapsed = time.perf_counter() - t
            if not model.is_recurrent:  # a recurrent cache keeps the row (it grows by one)
                model.truncate(start_len)
            return elapsed

        tuner.calibrate(one_pass)
    finally:
        model.truncate(base)
