"""Timing decodes on the live model: what auto mode's cost model is built from."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from desktop_app.engine.llama.model import LlamaModel
from desktop_app.engine.llama.threads import ThreadTuner


class CalibrationInterrupted(Exception):
    """``should_stop`` asked calibration to give way (nothing was cached)."""


def _room_for(model: LlamaModel, rows: int, depth: int) -> int:
    """The depth timed decodes of up to ``rows`` more tokens can run at in this context. A cache
    that leaves no room for them is trimmed first (a small context full of a long prompt: the
    conversation's prefix is decoded again next turn), so calibration never overflows."""
    room = max(0, model.n_ctx - rows - 1)
    if len(model.kv_tokens) > room:
        model.truncate(room)
    return min(depth, room)


def time_decodes(
    model: LlamaModel,
    sizes: list[int],
    token: int,
    depth: int,
    reps: int,
    should_stop: Callable[[], bool] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> list[float]:
    """Median seconds each batch size costs a speculative loop (all rows' logits), ``depth``
    tokens in.

    Timed as the loop meets them. llama.cpp reuses its compute graph while the batch shape
    repeats: plain decoding, one token after another, reuses it; a verify pass rebuilds it,
    and so does the one-token pass after it. So one token is timed after one token (the steady
    cost of plain decoding), and every other size after a one-token pass, followed by the
    one-token pass it leaves behind, whose extra time is charged to it (on a 2-core CPU 1.4 ms,
    12% of a token: timed round-robin alone, a one-token pass looked that much dearer and every
    draft that much cheaper). Sizes go round-robin, so a size is never timed after itself. The
    cache is trimmed back afterwards, so a conversation's cached prefix survives.
    """
    # a recurrent cache grows by a row per timed decode (see timed)
    growth = (reps + 1) * 2 * len(sizes) if model.is_recurrent else 0
    depth = _room_for(model, max(sizes) + growth, depth)
    base = len(model.kv_tokens)
    steady: list[float] = []
    passes: dict[int, list[float]] = {b: [] for b in sizes if b > 1}
    after: dict[int, list[float]] = {b: [] for b in sizes if b > 1}
    start_len = 0

    def timed(b: int) -> float:
        t = clock()
        model.decode_all_rows([token] * b)
        elapsed = clock() - t
        # a recurrent cache gives back all but one row of a decode: it grows by one
        model.truncate(len(model.kv_tokens) - b + 1 if model.is_recurrent else start_len)
        return elapsed

    try:
        if base < depth:
            model.prefill(model.kv_tokens + [token] * (depth - base), need_logits=False)
        start_len = len(model.kv_tokens)
        for rep in range(reps + 1):  # the first round warms up
            if should_stop is not None and should_stop():
                raise CalibrationInterrupted
            timed(1)
            single = timed(1)
            if rep:
                steady.append(single)
            for b in passes:
                if should_stop is not None and should_stop():
                    raise CalibrationInterrupted
                pass_s, next_s = timed(b), timed(1)
                if rep:
                    passes[b].append(pass_s)
                    after[b].append(next_s)
        one = statistics.median(steady)
        # what the one-token pass after a verify pass pays, pooled over the sizes (it rebuilds
        # the same one-token graph whatever came before)
        rebuild = (
            max(0.0, statistics.median([s for samples in after.values() for s in samples]) - one) if after else 0.0
        )
        return [one if b == 1 else statistics.median(passes[b]) + rebuild for b in sizes]
    finally:
        model.truncate(base)


def tune_threads(
    model: LlamaModel,
    tuner: ThreadTuner,
    token: int,
    depth: int,
    should_stop: Callable[[], bool] | None = None,
) -> None:
    """Let ``tuner`` time one-token decodes ``depth`` tokens in at each thread count it may use
    (the cache is trimmed back afterwards)."""
    if not tuner.adaptive:
        return
    # a recurrent cache grows by a row per timed pass: 2 a candidate, 3 rounds (ThreadTuner.calibrate)
    depth = _room_for(model, 2 * 3 * len(tuner.candidates) if model.is_recurrent else 1, depth)
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
