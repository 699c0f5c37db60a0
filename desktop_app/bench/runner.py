"""``specchat bench``: does speculation pay on this machine, for this pair, for this task?

Runs prompt sets by category, interleaving speculation off / fixed k / auto on the same loaded
models (so all modes share the machine's state), and reports per category: median decode
tokens/s, speed-up over off, acceptance, tokens per target pass, and whether the greedy outputs
were identical. Writes ``bench.json``, ``bench.md`` and a ``bench.png`` chart.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop_app.bench.quiet import wait_for_quiet
from desktop_app.engine import Engine
from desktop_app.engine.api import (
    DrafterKind,
    GenerateRequest,
    Message,
    SpecMode,
    choose_drafter,
)
from desktop_app.engine.events import Finished, final_result
from desktop_app.resources import resources_dir

MULTI_TURN = "multi-turn"  # a category of conversations: later turns edit or extend earlier answers
FRESH, WARM = " (fresh cache)", " (warm cache)"


@dataclass(frozen=True)
class Mode:
    """One way of answering: speculation off, one drafter at a fixed k, or Auto."""

    name: str
    spec: SpecMode
    drafter: DrafterKind | None = None
    k: int = 0


def modes_for(ks: list[int], drafters: list[DrafterKind], auto_drafter: DrafterKind | None) -> list[Mode]:
    """off, each drafter at each fixed k (named "k4" when there is one drafter, "ngram:k4" when
    several), and auto (with ``auto_drafter``, or choosing among them all when None)."""
    fixed = [Mode(f"{d.value}:k{k}" if len(drafters) > 1 else f"k{k}", SpecMode.ON, d, k) for d in drafters for k in ks]
    return [Mode("off", SpecMode.OFF), *fixed, Mode("auto", SpecMode.AUTO, auto_drafter, max(ks))]


def is_fixed(mode: str) -> bool:
    return mode not in ("off", "auto")


@dataclass
class RunResult:
    category: str
    prompt: int
    mode: str
    tokens_per_s: float
    generated: int
    acceptance: float
    tokens_per_pass: float
    token_ids: list[int] = field(repr=False, default_factory=list)
    k_mean: float = 0.0
    by_drafter: dict[str, tuple[int, int]] = field(default_factory=dict)
    slot: int = 0  # the round's timed turn this run answered: runs of one slot are compared


Prompt = str | list[str]  # one message, or a conversation's user turns


def single_prompts(prompts: list[Prompt]) -> list[str]:
    return [p for p in prompts if isinstance(p, str)]


def load_prompts(path: Path | None) -> dict[str, list[Prompt]]:
    path = path or resources_dir() / "bench" / "prompts.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"prompt file not found: {path}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not all(
        isinstance(v, list) and v and all(_is_prompt(p) for p in v) for v in data.values()
    ):
        raise ValueError(
            f"{path} must map category names to non-empty lists of prompts "
            "(a prompt is a string, or a list of a conversation's user turns)"
        )
    return data


def chosen_prompts(args: argparse.Namespace) -> dict[str, list[Prompt]]:
    """The prompt set of ``--prompts``, only the ``--categories`` asked for (unknown ones named)."""
    prompts = load_prompts(args.prompts)
    if args.categories:
        unknown = set(args.categories) - set(prompts)
        if unknown:
            raise ValueError(f"unknown categories: {', '.join(sorted(unknown))}; have {', '.join(prompts)}")
        prompts = {c: prompts[c] for c in args.categories}
    return prompts


def _is_prompt(p: object) -> bool:
    return isinstance(p, str) or (isinstance(p, list) and len(p) >= 2 and all(isinstance(t, str) for t in p))


def _drafter(engine: Engine, args: argparse.Namespace) -> DrafterKind:
    return choose_drafter(args.drafter, engine.drafters_available())


def bench_modes(engine: Engine, args: argparse.Namespace) -> list[Mode]:
    if args.auto_all:
        return modes_for(args.draft_max, list(engine.drafters_available()), None)
    return modes_for(args.draft_max, [_drafter(engine, args)], _drafter(engine, args))


def _generate(engine: Engine, messages: list[Message], mode: Mode, args: argparse.Namespace) -> Finished:
    request = GenerateRequest(
        messages=messages,
        max_tokens=args.max_tokens,
        spec=mode.spec,
        draft_max=mode.k or max(args.draft_max),
        drafter=mode.drafter,
    )
    return final_result(engine.generate(request))


def timed_turns(engine: Engine, prompt: Prompt, args: argparse.Namespace) -> list[list[Message]]:
    """The messages of each timed turn: a single prompt's, or a conversation's later turns
    after its earlier turns were answered greedily (the same history for every mode)."""
    if isinstance(prompt, str):
        return [[{"role": "user", "content": prompt}]]
    history: list[Message] = []
    timed = []
    for i, turn in enumerate(prompt):
        history = [*history, {"role": "user", "content": turn}]
        if i > 0:
            timed.append(list(history))
        if i < len(prompt) - 1:
            answer = _generate(engine, history, Mode("off", SpecMode.OFF), args)  # the n-gram cache learns it
            history = [*history, {"role": "assistant", "content": answer.text}]
    return timed


def run_category(
    engine: Engine,
    category: str,
    prompts: list[Prompt],
    modes: list[Mode],
    args: argparse.Namespace,
    repeat: int,
    progress: Callable[[str], None],
    slots: list[int] | None = None,
) -> list[RunResult]:
    """Every mode on every prompt of one category, interleaved (the order rotates). Off and Auto
    run twice, as off-Auto-Auto-off (or Auto-off-off-Auto): the ratio the bench is most about is
    taken between runs around the same moment, with a steady drift of the machine's speed
    cancelled (two runs ten modes apart see different loads). Every mode starts from the same
    n-gram cache (what was learned before this prompt); the cache then learns the answer once,
    as it would in use. ``slots`` counts the timed turns run so far (one per turn and round)."""
    slots = slots if slots is not None else [0]
    results = []
    for index, prompt in enumerate(prompts):
        for turn in timed_turns(engine, prompt, args):
            if args.quiet_wait > 0:
                wait_for_quiet(args.quiet_wait)  # each prompt's modes run on an idle machine
            before = engine.ngrams.snapshot()
            answers = {}
            slots[0] += 1
            for mode in _round_order(modes, repeat + index):
                engine.ngrams.restore(before)
                engine.forget_last_answer()  # the same prompt tokens for every mode
                out = _generate(engine, turn, mode, args)
                answers[mode.name] = out
                s = out.stats
                results.append(
                    RunResult(
                        category,
                        index,
                        mode.name,
                        s.decode_tokens_per_s,
                        s.generated_tokens,
                        s.acceptance_rate,
                        s.tokens_per_pass,
                        out.token_ids,
                        statistics.fmean(s.k_history) if s.k_history else 0.0,
                        dict(s.by_drafter),
                        slots[0],
                    )
                )
                progress(
                    f"  {category:24} #{index} {mode.name:16} {s.decode_tokens_per_s:7.1f} tok/s "
                    f"acc {s.acceptance_rate:4.0%} tok/pass {s.tokens_per_pass:4.2f}"
                )
            engine.ngrams.restore(before)
            engine.ngrams.learn(answers["off"].token_ids)
    return results


def _round_order(modes: list[Mode], turn: int) -> list[Mode]:
    """The modes in this round's order: the fixed ones rotating, off and Auto as one unit of
    four runs, off-Auto-Auto-off or Auto-off-off-Auto (alternating)."""
    off, auto = (next(m for m in modes if m.name == name) for name in ("off", "auto"))
    pair = [off, auto, auto, off] if turn % 2 == 0 else [auto, off, off, auto]
    units = [pair, *([m] for m in modes if is_fixed(m.name))]
    rotation = turn % len(units)
    return [m for unit in units[rotation:] + units[:rotation] for m in unit]


def run_bench(
    engine: Engine, prompts: dict[str, list[Prompt]], args: argparse.Namespace, progress: Callable[[str], None] = print
) -> list[RunResult]:
    """All categories; a multi-turn category runs twice: first from an empty n-gram cache, last
    from the cache the other categories' answers warmed (its own fresh run forgotten)."""
    modes = bench_modes(engine, args)
    engine.prepare_auto(None if args.auto_all else _drafter(engine, args), max(args.draft_max))
    _generate(engine, [{"role": "user", "content": "Hello"}], modes[0], args)  # warm-up
    engine.ngrams.clear()
    results: list[RunResult] = []
    slots = [0]
    for repeat in range(args.repeats):
        engine.ngrams.clear()
        if MULTI_TURN in prompts:
            results += run_category(
                engine, MULTI_TURN + FRESH, prompts[MULTI_TURN], modes, args, repeat, progress, slots
            )
            engine.ngrams.clear()
        for category, texts in prompts.items():
            if category != MULTI_TURN:
                results += run_category(engine, category, texts, modes, args, repeat, progress, slots)
        if MULTI_TURN in prompts:
            results += run_category(
                engine, MULTI_TURN + WARM, prompts[MULTI_TURN], modes, args, repeat, progress, slots
            )
    return results


def summarise(results: list[RunResult]) -> dict[str, dict[str, Any]]:
    summary: dict[str, dict[str, Any]] = {}
    modes = list(dict.fromkeys(r.mode for r in results))
    for category in dict.fromkeys(r.category for r in results):
        rows = [r for r in results if r.category == category]
        entry: dict[str, Any] = {}
        for mode in modes:
            mine = [r for r in rows if r.mode == mode]
            entry[mode] = {
                "median_tokens_per_s": round(statistics.median(r.tokens_per_s for r in mine), 2),
                "acceptance": round(statistics.fmean(r.acceptance for r in mine), 3),
                "tokens_per_pass": round(statistics.fmean(r.tokens_per_pass for r in mine), 3),
                "mean_k": round(statistics.fmean(r.k_mean for r in mine), 2),
            }
        fixed = [m for m in modes if is_fixed(m)]
        best = max(fixed, key=lambda m: entry[m]["median_tokens_per_s"])
        # Speed-ups are medians of paired ratios: each turn's runs in a mode against the other
        # mode's runs of the same turn in the same round (interleaved), which cancels the
        # machine's slow drift.
        for mode in modes:
            entry[mode]["speedup_vs_off"] = _paired_ratio(rows, mode, "off")
        entry["best_fixed"] = best
        entry["auto"]["vs_best_fixed"] = _paired_ratio(rows, "auto", best)
        entry["auto"]["accepted_by_drafter"] = _accepted_by_drafter(
            [r for r in rows if r.mode == "auto"], runs_per_slot=_runs_per_slot(rows, "auto")
        )
        reference = {r.slot: r.token_ids for r in rows if r.mode == "off"}
        entry["identical_at_t0"] = bool(reference) and all(r.token_ids == reference[r.slot] for r in rows)
        summary[category] = entry
    return summary


def _runs_per_slot(rows: list[RunResult], mode: str) -> int:
    slots = {r.slot for r in rows if r.mode == mode}
    return max(1, sum(r.mode == mode for r in rows) // max(len(slots), 1))


def _accepted_by_drafter(rows: list[RunResult], runs_per_slot: int = 1) -> dict[str, int]:
    """Tokens accepted per drafter, per answer set: a mode run twice in a slot counts once."""
    totals: dict[str, int] = {}
    for r in rows:
        for name, (_, accepted) in r.by_drafter.items():
            totals[name] = totals.get(name, 0) + accepted
    return dict(sorted(((k, v // runs_per_slot) for k, v in totals.items()), key=lambda item: -item[1]))


def _paired_ratio(rows: list[RunResult], mode: str, baseline: str) -> float:
    """The median over slots (a turn in a round) of the mode's mean speed over the baseline's."""
    speeds: dict[tuple[str, int], list[float]] = {}
    for r in rows:
        speeds.setdefault((r.mode, r.slot), []).append(r.tokens_per_s)
    ratios = [
        statistics.fmean(v) / statistics.fmean(speeds[(baseline, slot)])
        for (m, slot), v in speeds.items()
        if m == mode and speeds.get((baseline, slot)) and statistics.fmean(speeds[(baseline, slot)]) > 0
    ]
    return round(statistics.median(ratios), 3) if ratios else 0.0


def markdown(summary: dict[str, dict[str, Any]], header: str) -> str:
    lines = [
        header,
        "",
        "| category | off tok/s | best fixed | best fixed tok/s | auto tok/s | best fixed vs off | auto vs off "
        "| auto vs best fixed | auto's accepted tokens by drafter | auto mean k | identical at T=0 |",
        "|---" * 11 + "|",
    ]
    for category, e in summary.items():
        best = e["best_fixed"]
        drafters = ", ".join(f"{name} {n}" for name, n in e["auto"].get("accepted_by_drafter", {}).items()) or "none"
        lines.append(
            f"| {category} | {e['off']['median_tokens_per_s']:.1f} | {best.replace('k', 'k=')} | "
            f"{e[best]['median_tokens_per_s']:.1f} | {e['auto']['median_tokens_per_s']:.1f} | "
            f"{e[best]['speedup_vs_off']:.2f}x | {e['auto']['speedup_vs_off']:.2f}x | {e['auto']['vs_best_fixed']:.2f}x | "
            f"{drafters} | {e['auto']['mean_k']:.1f} | {'yes' if e['identical_at_t0'] else 'NO'} |"
        )
    return "\n".join(lines)


ChartFn = Callable[[dict[str, dict[str, Any]], Path, str], None]


def cmd_bench(
    args: argparse.Namespace, load_engine: Callable[[argparse.Namespace], Engine], draw_chart: ChartFn
) -> int:
    """Run the bench; ``draw_chart`` (from the GUI layer: it paints with Qt) writes the PNG."""
    prompts = chosen_prompts(args)
    engine = load_engine(args)
    assert engine.target is not None
    drafter = _drafter(engine, args)
    draft_name = engine.draft.name if engine.draft is not None and drafter is DrafterKind.MODEL else drafter.label
    if args.auto_all:
        draft_name = "every drafter (" + ", ".join(k.label for k in engine.drafters_available()) + ")"
    header = (
        f"**{engine.target.name}** + **{draft_name}** on {engine.backend().summary()} "
        f"({platform.machine()}, {__import__('os').cpu_count()} cores), max {args.max_tokens} tokens, "
        f"{args.repeats} repeat(s), greedy"
    )
    print(header, file=sys.stderr)
    costs = engine.prepare_auto(None if args.auto_all else drafter, max(args.draft_max))  # run_bench's, measured now
    calibrated = list(costs.target_batch_s) if costs is not None else []
    results = run_bench(engine, prompts, args, progress=lambda line: print(line, file=sys.stderr))
    summary = summarise(results)
    args.out.mkdir(parents=True, exist_ok=True)
    pass_ms = {
        "calibrated": [round(c * 1e3, 2) for c in calibrated],
        "after the run": [round(c * 1e3, 2) for c in costs.target_batch_s] if costs is not None else [],
    }
    report = {
        "header": header,
        "fixed_k": args.draft_max,
        "summary": summary,
        "auto_pass_ms": pass_ms,
        "runs": [{k: v for k, v in vars(r).items() if k != "token_ids"} for r in results],
    }
    (args.out / "bench.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    table = markdown(summary, header)
    if calibrated:
        table += "\n\n" + "\n".join(
            f"Auto's target pass of 1, 2, ... rows, ms ({when}): {', '.join(f'{c:g}' for c in ms)}"
            for when, ms in pass_ms.items()
        )
    (args.out / "bench.md").write_text(table + "\n", encoding="utf-8")
    draw_chart(summary, args.out / "bench.png", f"{engine.target.name} + {draft_name}")
    print(table)
    print(f"\nwrote {args.out / 'bench.json'}, {args.out / 'bench.md'}, {args.out / 'bench.png'}")
    return 0
