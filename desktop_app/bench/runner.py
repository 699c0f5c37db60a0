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

from desktop_app.engine import Engine, Finished, GenerateRequest
from desktop_app.resources import resources_dir

MODES = ("off", "fixed", "auto")


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


def _generate(engine: Engine, prompt: str, mode: str, args: argparse.Namespace) -> Finished:
    request = GenerateRequest(
        messages=[{"role": "user", "content": prompt}],
        max_tokens=args.max_tokens,
        spec={"fixed": "on"}.get(mode, mode),
        draft_max=args.draft_max,
        drafter=args.drafter or ("model" if engine.draft is not None else "ngram"),
    )
    result = None
    for event in engine.generate(request):
        if isinstance(event, Finished):
            result = event
    assert result is not None
    return result


def run_bench(engine: Engine, prompts: dict[str, list[str]], args: argparse.Namespace,
              progress: Callable[[str], None] = print) -> list[RunResult]:
    drafter = args.drafter or ("model" if engine.draft is not None else "ngram")
    from desktop_app.engine.drafters import ModelDrafter, NgramDrafter

    engine.calibrate(ModelDrafter(engine.draft) if drafter == "model" and engine.draft else NgramDrafter(), 8)
    _generate(engine, "Hello", "off", args)  # warm-up
    results: list[RunResult] = []
    for repeat in range(args.repeats):
        for category, texts in prompts.items():
            for index, text in enumerate(texts):
                rotation = (repeat + index) % len(MODES)
                for mode in MODES[rotation:] + MODES[:rotation]:  # interleave, rotate the order
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
    for category in dict.fromkeys(r.category for r in results):
        rows = [r for r in results if r.category == category]
        entry: dict[str, Any] = {}
        for mode in MODES:
            mine = [r for r in rows if r.mode == mode]
            entry[mode] = {
                "median_tokens_per_s": round(statistics.median(r.tokens_per_s for r in mine), 2),
                "acceptance": round(statistics.fmean(r.acceptance for r in mine), 3),
                "tokens_per_pass": round(statistics.fmean(r.tokens_per_pass for r in mine), 3),
                "mean_k": round(statistics.fmean(r.k_mean for r in mine), 2),
            }
        off = entry["off"]["median_tokens_per_s"]
        for mode in ("fixed", "auto"):
            entry[mode]["speedup_vs_off"] = round(entry[mode]["median_tokens_per_s"] / off, 3) if off else 0.0
        best_fixed = entry["fixed"]["median_tokens_per_s"]
        entry["auto"]["vs_fixed"] = round(entry["auto"]["median_tokens_per_s"] / best_fixed, 3) if best_fixed else 0.0
        off_ids = {(r.prompt, i): r.token_ids for i, r in enumerate(x for x in rows if x.mode == "off")}
        identical = True
        for mode in ("fixed", "auto"):
            spec_ids = {(r.prompt, i): r.token_ids for i, r in enumerate(x for x in rows if x.mode == mode)}
            identical &= spec_ids == off_ids
        entry["identical_at_t0"] = identical
        summary[category] = entry
    return summary


def markdown(summary: dict[str, dict[str, Any]], header: str, k: int) -> str:
    lines = [header, "",
             f"| category | off tok/s | k={k} tok/s | auto tok/s | k={k} vs off | auto vs off | auto vs k={k} | acceptance (k={k}) | tokens/pass (k={k}) | auto mean k | identical at T=0 |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for category, e in summary.items():
        lines.append(
            f"| {category} | {e['off']['median_tokens_per_s']:.1f} | {e['fixed']['median_tokens_per_s']:.1f} | "
            f"{e['auto']['median_tokens_per_s']:.1f} | {e['fixed']['speedup_vs_off']:.2f}x | "
            f"{e['auto']['speedup_vs_off']:.2f}x | {e['auto']['vs_fixed']:.2f}x | {e['fixed']['acceptance']:.0%} | "
            f"{e['fixed']['tokens_per_pass']:.2f} | {e['auto']['mean_k']:.1f} | {'yes' if e['identical_at_t0'] else 'NO'} |"
        )
    return "\n".join(lines)


def cmd_bench(args: argparse.Namespace, load_engine: Callable[[argparse.Namespace], Engine]) -> int:
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
    drafter = args.drafter or ("model" if engine.draft is not None else "ngram")
    draft_name = engine.draft.name if engine.draft is not None and drafter == "model" else "prompt lookup"
    header = (f"**{engine.target.name}** + **{draft_name}** on {engine.backend().summary()} "
              f"({platform.machine()}, {__import__('os').cpu_count()} cores), max {args.max_tokens} tokens, "
              f"{args.repeats} repeat(s), greedy")
    print(header, file=sys.stderr)
    results = run_bench(engine, prompts, args, progress=lambda line: print(line, file=sys.stderr))
    summary = summarise(results)
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"header": header, "draft_max": args.draft_max, "summary": summary,
              "runs": [{k: v for k, v in vars(r).items() if k != "token_ids"} for r in results]}
    (args.out / "bench.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    table = markdown(summary, header, args.draft_max)
    (args.out / "bench.md").write_text(table + "\n", encoding="utf-8")
    from desktop_app.bench.chart import draw_chart

    draw_chart(summary, args.out / "bench.png", title=f"{engine.target.name} + {draft_name}", k=args.draft_max)
    print(table)
    print(f"\nwrote {args.out / 'bench.json'}, {args.out / 'bench.md'}, {args.out / 'bench.png'}")
    return 0
