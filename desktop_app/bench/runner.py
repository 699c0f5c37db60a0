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

from desktop_app.engine import Engine
from desktop_app.engine.api import DrafterKind, Finished, GenerateRequest, SpecMode, choose_drafter, final_result
from desktop_app.resources import resources_dir


def modes_for(ks: list[int]) -> list[str]:
    return ["off", *(f"k{k}" for k in ks), "auto"]


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


def load_prompts(path: Path | None) -> dict[str, list[str]]:
    path = path or resources_dir() / "bench" / "prompts.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"prompt file not found: {path}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not all(
        isinstance(v, list) and v and all(isinstance(p, str) for p in v) for v in data.values()
    ):
        raise ValueError(f"{path} must map category names to non-empty lists of prompts")
    return data


def _drafter(engine: Engine, args: argparse.Namespace) -> DrafterKind:
    return choose_drafter(args.drafter, engine.drafters_available())


def _generate(engine: Engine, prompt: str, mode: str, args: argparse.Namespace) -> Finished:
    fixed = mode.startswith("k")
    request = GenerateRequest(
        messages=[{"role": "user", "content": prompt}],
        max_tokens=args.max_tokens,
        spec=SpecMode.ON if fixed else SpecMode(mode),
        draft_max=int(mode[1:]) if fixed else max(args.draft_max),
        drafter=_drafter(engine, args),
    )
    return final_result(engine.generate(request))


def run_bench(engine: Engine, prompts: dict[str, list[str]], args: argparse.Namespace,
              progress: Callable[[str], None] = print) -> list[RunResult]:
    engine.calibrate(engine.drafter_for(_drafter(engine, args)), max(args.draft_max))
    _generate(engine, "Hello", "off", args)  # warm-up
    results: list[RunResult] = []
    modes = modes_for(args.draft_max)
    for repeat in range(args.repeats):
        for category, texts in prompts.items():
            for index, text in enumerate(texts):
                rotation = (repeat + index) % len(modes)
                for mode in modes[rotation:] + modes[:rotation]:  # interleave, rotate the order
                    out = _generate(engine, text, mode, args)
                    s = out.stats
                    results.append(RunResult(
                        category, index, mode, s.decode_tokens_per_s, s.generated_tokens,
                        s.acceptance_rate, s.tokens_per_pass, out.token_ids,
                        statistics.fmean(s.k_history) if s.k_history else 0.0,
                    ))
                    progress(f"  {category:12} #{index} {mode:5} {s.decode_tokens_per_s:7.1f} tok/s "
                             f"acc {s.acceptance_rate:4.0%} tok/pass {s.tokens_per_pass:4.2f}")
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
        fixed = [m for m in modes if m.startswith("k")]
        best = max(fixed, key=lambda m: entry[m]["median_tokens_per_s"])
        # Speed-ups are medians of paired ratios: each run against the other mode's run of the
        # same prompt in the same round (interleaved), which cancels the machine's slow drift.
        for mode in modes:
            entry[mode]["speedup_vs_off"] = _paired_ratio(rows, mode, "off")
        entry["best_fixed"] = best
        entry["auto"]["vs_best_fixed"] = _paired_ratio(rows, "auto", best)
        reference = [r.token_ids for r in rows if r.mode == "off"]
        entry["identical_at_t0"] = all(
            [r.token_ids for r in rows if r.mode == mode] == reference for mode in modes if mode != "off"
        )
        summary[category] = entry
    return summary


def _paired_ratio(rows: list[RunResult], mode: str, baseline: str) -> float:
    base = {}
    seen: dict[tuple[int, str], int] = {}
    pairs = []
    for r in rows:  # runs come in rounds; the n-th run of a prompt in each mode forms a pair
        n = seen[(r.prompt, r.mode)] = seen.get((r.prompt, r.mode), -1) + 1
        if r.mode == baseline:
            base[(r.prompt, n)] = r.tokens_per_s
    seen.clear()
    for r in rows:
        n = seen[(r.prompt, r.mode)] = seen.get((r.prompt, r.mode), -1) + 1
        if r.mode == mode and base.get((r.prompt, n)):
            pairs.append(r.tokens_per_s / base[(r.prompt, n)])
    return round(statistics.median(pairs), 3) if pairs else 0.0


def markdown(summary: dict[str, dict[str, Any]], header: str) -> str:
    first = next(iter(summary.values()))
    fixed = [m for m in first if m.startswith("k")]
    cols = ["off", *fixed, "auto"]
    lines = [header, "",
             "| category | " + " | ".join(f"{c.replace('k', 'k=')} tok/s" for c in cols)
             + " | best fixed vs off | auto vs off | auto vs best fixed | acceptance (best k) | tokens/pass (best k) | auto mean k | identical at T=0 |",
             "|---" * (len(cols) + 8) + "|"]
    for category, e in summary.items():
        best = e["best_fixed"]
        speeds = " | ".join(f"{e[c]['median_tokens_per_s']:.1f}" for c in cols)
        lines.append(
            f"| {category} | {speeds} | {e[best]['speedup_vs_off']:.2f}x ({best.replace('k', 'k=')}) | "
            f"{e['auto']['speedup_vs_off']:.2f}x | {e['auto']['vs_best_fixed']:.2f}x | {e[best]['acceptance']:.0%} | "
            f"{e[best]['tokens_per_pass']:.2f} | {e['auto']['mean_k']:.1f} | {'yes' if e['identical_at_t0'] else 'NO'} |"
        )
    return "\n".join(lines)


ChartFn = Callable[[dict[str, dict[str, Any]], Path, str], None]


def cmd_bench(args: argparse.Namespace, load_engine: Callable[[argparse.Namespace], Engine], draw_chart: ChartFn) -> int:
    """Run the bench; ``draw_chart`` (from the GUI layer: it paints with Qt) writes the PNG."""
    prompts = load_prompts(args.prompts)
    if args.categories:
        unknown = set(args.categories) - set(prompts)
        if unknown:
            raise ValueError(f"unknown categories: {', '.join(sorted(unknown))}; have {', '.join(prompts)}")
        prompts = {c: prompts[c] for c in args.categories}
    engine = load_engine(args)
    assert engine.target is not None
    if args.overhead:
        from desktop_app.bench.overhead import cmd_overhead

        report = cmd_overhead(engine, prompts, args)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "overhead.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
        print(json.dumps(report, indent=2))
        return 0
    drafter = _drafter(engine, args)
    draft_name = engine.draft.name if engine.draft is not None and drafter is DrafterKind.MODEL else drafter.label
    header = (f"**{engine.target.name}** + **{draft_name}** on {engine.backend().summary()} "
              f"({platform.machine()}, {__import__('os').cpu_count()} cores), max {args.max_tokens} tokens, "
              f"{args.repeats} repeat(s), greedy")
    print(header, file=sys.stderr)
    results = run_bench(engine, prompts, args, progress=lambda line: print(line, file=sys.stderr))
    summary = summarise(results)
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"header": header, "fixed_k": args.draft_max, "summary": summary,
              "runs": [{k: v for k, v in vars(r).items() if k != "token_ids"} for r in results]}
    (args.out / "bench.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    table = markdown(summary, header)
    (args.out / "bench.md").write_text(table + "\n", encoding="utf-8")
    draw_chart(summary, args.out / "bench.png", f"{engine.target.name} + {draft_name}")
    print(table)
    print(f"\nwrote {args.out / 'bench.json'}, {args.out / 'bench.md'}, {args.out / 'bench.png'}")
    return 0
