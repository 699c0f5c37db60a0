"""``python -m lab replay``: the drafter bench without the machine's noise.

The bench's prompts, modes and order run through the real engine, loop, drafters, policies and
n-gram cache, but the target's passes are replayed: each answer is the greedy answer recorded
once with the real model, and each pass of b rows costs what a given cost table says, on a
virtual clock. Only the target's forward passes are replaced, so what Auto chooses, and what
every fixed mode drafts and has accepted, is what the bench would see; the speeds are what those
passes cost at the table, with no noise, no stalls and none of the Python between passes. It
answers in seconds, at as many tables as asked (this machine's, another machine's), what a
policy change does to every category: the bench itself takes an hour and moves 5-10% per
prompt between runs. Greedy only (a replayed pass knows one token per row), and model-free
drafters only (a draft model's time is not the table's).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from desktop_app.bench.runner import RunResult, chosen_prompts, is_fixed, markdown, run_bench, summarise
from desktop_app.engine import Engine
from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.engine.auto.setup import copy_limit
from desktop_app.engine.llama.model import LlamaModel
from desktop_app.engine.llama.threads import ThreadTuner

Answers = dict[tuple[int, ...], list[int]]  # prompt tokens -> the greedy answer (its end-of-generation token last)


class VirtualClock:
    """Seconds the replayed passes have cost so far."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class ReplayTarget(LlamaModel):
    """The target as the loop sees it, without a context of its own: the real model's
    vocabulary and options, its own list of cached tokens, and passes that answer from the
    recorded greedy answer and advance the clock by the table's cost for their rows."""

    def __init__(
        self, real: LlamaModel, pass_s: Sequence[float], clock: VirtualClock, answers: Answers, max_tokens: int
    ) -> None:
        self.__dict__.update(real.__dict__)  # vocabulary, chat template, options: the real model's
        self.kv_tokens = []
        self._real = real
        self._pass_s = list(pass_s)
        self._clock = clock
        self._answers = answers
        self._max_tokens = max_tokens
        self._full: list[int] | None = None  # the prompt and its answer
        self._first = 0  # the position the last pass's row 0 predicts
        self._row = np.zeros(real.n_vocab, dtype=np.float32)
        self._hot = 0

    def close(self) -> None:
        """The real model's handles are the real model's to free."""

    def __del__(self) -> None:
        pass

    def set_threads(self, count: int, batch_count: int | None = None) -> None:
        pass

    def prefill(self, tokens: Sequence[int], need_logits: bool = True, hidden_from: int | None = None) -> int:
        self.kv_tokens = list(tokens)
        self._full = None
        return len(tokens)

    def prefill_steps(
        self,
        tokens: Sequence[int],
        need_logits: bool = True,
        hidden_from: int | None = None,
        media: object = None,  # a text prompt's: the replay has no images
    ) -> Iterator[int]:
        """The prompt read at once (the engine reads a real one batch by batch, reporting each)."""
        yield 0
        self.prefill(tokens, need_logits, hidden_from)
        yield len(tokens)

    def _answer(self, prompt: list[int]) -> list[int]:
        key = tuple(prompt)
        if key not in self._answers:
            real, answer = self._real, []
            real.prefill(prompt, need_logits=True)
            while True:
                token = int(np.argmax(real.logits(-1)))
                answer.append(token)
                if real.is_eog(token) or len(answer) > self._max_tokens:
                    break
                real.decode_one(token)
            self._answers[key] = answer
        return self._answers[key]

    def _pass(self, tokens: Sequence[int]) -> None:
        self.ensure_fits(len(self.kv_tokens) + len(tokens))
        if self._full is None:  # the answer's first pass: its first token completes the prompt
            prompt = [*self.kv_tokens, tokens[0]]
            self._full = prompt + self._answer(prompt)
        self._first = len(self.kv_tokens) + 1
        self.kv_tokens.extend(tokens)
        self._clock.now += self._pass_s[len(tokens) - 1]

    def decode_all_rows(self, tokens: Sequence[int]) -> None:
        self._pass(tokens)

    def decode_one(self, token: int) -> None:
        self._pass((token,))

    def logits(self, row: int = -1) -> np.ndarray:
        """One-hot on the recorded answer's token at that row's position."""
        assert self._full is not None
        rows = len(self.kv_tokens) - self._first + 1
        position = self._first + (row if row >= 0 else rows + row)
        token = self._full[position] if position < len(self._full) else self.eos_id
        self._row[self._hot] = 0.0
        self._row[token] = 1.0
        self._hot = token
        return self._row

    def truncate(self, n_keep: int) -> None:
        del self.kv_tokens[n_keep:]

    def clear(self) -> None:
        self.kv_tokens = []


def extended(pass_s: Sequence[float], rows: int) -> list[float]:
    """A cost table for passes of up to ``rows`` rows: the one given, then a line at the mean
    cost of a row over its last 4 sizes (on a CPU a long pass costs about linearly in its rows)."""
    table = list(pass_s[:rows])
    tail = table[-4:]
    slope = (tail[-1] - tail[0]) / max(len(tail) - 1, 1)
    while len(table) < rows:
        table.append(table[-1] + slope)
    return table


@contextmanager
def replaying(
    engine: Engine, pass_s: Sequence[float], answers: Answers, max_tokens: int, k_max: int
) -> Iterator[VirtualClock]:
    """The engine's target replayed at ``pass_s`` (seconds per pass of 1, 2, ... rows) for the
    block: Auto plans with exactly these costs, the thread count stays, and what Auto learned
    before starts afresh (as a bench in a new process would)."""
    real = engine.target
    if real is None:
        raise ValueError("no target loaded")
    if len(pass_s) < k_max + 1:
        raise ValueError(
            f"a cost table for drafts of up to {k_max} tokens needs {k_max + 1} pass costs "
            f"(1 to {k_max + 1} rows), not {len(pass_s)}"
        )
    modelled = [k.label for k in engine.drafters_available() if k.needs_model]
    if modelled:
        raise ValueError(
            f"a replay times target passes only, and {', '.join(modelled)} would draft for free: "
            "replay with a target that has no draft model or MTP layers"
        )
    clock = VirtualClock()
    threads, engine_clock = engine.threads, engine.clock
    engine.target = ReplayTarget(real, extended(pass_s, copy_limit(real) + 1), clock, answers, max_tokens)
    engine.threads = ThreadTuner(lambda count, batch: None, fixed=threads.count)
    engine.clock = clock
    engine.forget_learning()
    copy_max = copy_limit(real)
    for kind in engine.drafters_available():
        engine.use_costs(kind, k_max, CostModel(list(pass_s[: k_max + 1]), 0.0))
        if not kind.needs_model and copy_max != k_max:  # Auto's copies: up to copy_max
            engine.use_costs(kind, copy_max, CostModel(extended(pass_s, copy_max + 1), 0.0))
    try:
        yield clock
    finally:
        engine.target, engine.threads, engine.clock = real, threads, engine_clock
        engine.forget_learning()


def time_weighted(results: list[RunResult]) -> dict[str, dict[str, Any]]:
    """Per category: Auto's speed-up over off and over the best fixed mode in total time over
    all its answers (where the bench takes the median of per-prompt ratios, which a few prompts
    decide; a replay has no noise to guard against)."""
    out: dict[str, dict[str, Any]] = {}
    for category in dict.fromkeys(r.category for r in results):
        seconds: dict[str, float] = {}
        runs: dict[str, int] = {}
        for r in results:
            if r.category == category and r.tokens_per_s > 0:
                seconds[r.mode] = seconds.get(r.mode, 0.0) + r.generated / r.tokens_per_s
                runs[r.mode] = runs.get(r.mode, 0) + 1
        per_run = {m: s / runs[m] for m, s in seconds.items()}
        best = min((m for m in per_run if is_fixed(m)), key=per_run.__getitem__)
        out[category] = {
            "auto_vs_off": round(per_run["off"] / per_run["auto"], 4),
            "best_fixed": best,
            "auto_vs_best_fixed": round(per_run[best] / per_run["auto"], 4),
        }
    return out


def run(engine: Engine, args: argparse.Namespace) -> dict[str, Any]:
    """The bench replayed at each table of ``args.replay``; returns (and writes) the report."""
    prompts = chosen_prompts(args)
    k_max = max(args.draft_max)
    tune = dict(getattr(args, "tune", []))
    fields = dataclasses.fields(engine.auto.tunables)
    kinds = {f.name: type(getattr(engine.auto.tunables, f.name)) for f in fields}
    engine.auto.tunables = dataclasses.replace(engine.auto.tunables, **{n: kinds[n](v) for n, v in tune.items()})
    answers: Answers = {}
    args.quiet_wait = 0.0
    tables = []
    for ms in args.replay:
        with replaying(engine, [m / 1e3 for m in ms], answers, args.max_tokens, k_max):
            results = run_bench(engine, prompts, args, progress=lambda line: None)
        summary = summarise(results)
        tables.append({"pass_ms": ms, "summary": summary, "time_weighted": time_weighted(results)})
    report = {
        "tunables": dataclasses.asdict(engine.auto.tunables),
        "max_tokens": args.max_tokens,
        "fixed_k": args.draft_max,
        "repeats": args.repeats,
        "tables": tables,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "replay.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    text = "\n\n".join(_table_text(t) for t in tables)
    (args.out / "replay.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return report


def _table_text(table: dict[str, Any]) -> str:
    ms = ", ".join(f"{m:g}" for m in table["pass_ms"])
    weighted = "\n".join(
        f"- {c}: auto {w['auto_vs_off']:.3f}x of off, {w['auto_vs_best_fixed']:.3f}x of {w['best_fixed']}"
        for c, w in table["time_weighted"].items()
    )
    return (
        markdown(table["summary"], f"Replayed at {ms} ms per pass of 1, 2, ... rows")
        + "\n\nIn total time over all answers:\n"
        + weighted
    )
