"""``python -m lab unused-draft``: does a draft model Auto decides not to use cost anything?

Two engines load the same target, one with the draft as well. In interleaved rounds: plain
decoding without the draft, plain decoding with it loaded, and Auto with it (the pair a deep
target and a draft too weak to pay for itself on this machine, so Auto drafts little or
nothing). Reported: seconds per target pass with and without the draft loaded, and Auto's speed
over plain decoding, each as the median of the ratios taken within a round.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

from desktop_app.bench.quiet import wait_for_quiet
from desktop_app.engine import Engine, default_model_path
from desktop_app.engine.api import DrafterKind, GenerateRequest, ModelOptions, SpecMode
from desktop_app.engine.events import final_result
from desktop_app.engine.stats import GenerationStats
from lab.report import write_report

PASS_COST_TOLERANCE = 0.03  # Done-when targets (issue 13)
AUTO_VS_OFF = 0.97


def _engine(args: argparse.Namespace, with_draft: bool) -> Engine:
    engine = Engine()
    engine.load_target(
        args.target or default_model_path(),
        ModelOptions(n_ctx=args.ctx, n_threads=args.threads, n_gpu_layers=args.n_gpu_layers),
    )
    if with_draft:
        engine.load_draft(
            args.draft, ModelOptions(n_ctx=args.ctx, n_threads=args.threads, n_gpu_layers=args.draft_n_gpu_layers)
        )
        engine.prepare_auto(DrafterKind.MODEL, args.draft_max[0])
    return engine


def _answer(engine: Engine, prompt: str, mode: SpecMode, args: argparse.Namespace) -> tuple[GenerationStats, list[int]]:
    engine.forget_last_answer()
    done = final_result(
        engine.generate(
            GenerateRequest(
                messages=[{"role": "user", "content": prompt}],
                max_tokens=args.max_tokens,
                spec=mode,
                drafter=DrafterKind.MODEL if mode is SpecMode.AUTO else None,
                draft_max=args.draft_max[0],
            )
        )
    )
    return done.stats, done.token_ids


def _speed(s: GenerationStats) -> float:
    return s.generated_tokens / s.decode_s


def _pass_s(s: GenerationStats) -> float:
    return s.verify_s / max(s.target_passes, 1)


def measure(args: argparse.Namespace, prompt: str, rounds: int) -> dict[str, Any]:
    if args.draft is None:
        raise ValueError("--unused-draft needs --draft (and --target): the pair to measure")
    wait_for_quiet(args.quiet_wait)
    plain, paired = _engine(args, False), _engine(args, True)
    pass_ratio, auto_vs_off, auto_vs_paired_off, drafted = [], [], [], []
    rows: list[dict[str, float]] = []
    identical = True
    reference: list[int] | None = None
    for r in range(rounds + 1):  # round 0 warms up
        wait_for_quiet(args.quiet_wait)
        off, off_tokens = _answer(plain, prompt, SpecMode.OFF, args)
        loaded, loaded_tokens = _answer(paired, prompt, SpecMode.OFF, args)
        auto, auto_tokens = _answer(paired, prompt, SpecMode.AUTO, args)
        reference = reference or off_tokens
        identical &= off_tokens == loaded_tokens == auto_tokens == reference
        row = {
            "off_tok_s": _speed(off),
            "off_draft_loaded_tok_s": _speed(loaded),
            "auto_tok_s": _speed(auto),
            "off_pass_ms": _pass_s(off) * 1e3,
            "off_draft_loaded_pass_ms": _pass_s(loaded) * 1e3,
            "auto_drafted": auto.drafted,
        }
        print(f"round {r}: " + ", ".join(f"{k} {v:.2f}" for k, v in row.items()), file=sys.stderr, flush=True)
        if r:
            rows.append(row)
            pass_ratio.append(_pass_s(loaded) / _pass_s(off))
            auto_vs_off.append(_speed(auto) / _speed(off))
            auto_vs_paired_off.append(_speed(auto) / _speed(loaded))
            drafted.append(auto.drafted)
    target, draft = plain.target, paired.draft
    assert target is not None and draft is not None
    report = {
        "target": f"{target.name} ({target.info.arch_int('block_count')} layers)",
        "draft": f"{draft.name} ({draft.info.arch_int('block_count')} layers)",
        "max_tokens": args.max_tokens,
        "rounds": rounds,
        "pass_cost_with_draft_loaded": round(statistics.median(pass_ratio), 3),
        "auto_vs_off": round(statistics.median(auto_vs_off), 3),
        "auto_vs_off_with_draft_loaded": round(statistics.median(auto_vs_paired_off), 3),
        "auto_drafted_per_answer": statistics.median(drafted),
        "greedy_outputs_identical": identical,
        "rows": rows,
    }
    report["target_met"] = (
        abs(report["pass_cost_with_draft_loaded"] - 1) <= PASS_COST_TOLERANCE and report["auto_vs_off"] >= AUTO_VS_OFF
    )
    plain.close()
    paired.close()
    return report


def markdown(report: dict[str, Any]) -> str:
    return "\n".join(
        [
            f"{report['target']} + draft {report['draft']}, {report['max_tokens']} tokens, median of "
            f"{report['rounds']} same-round ratios",
            "",
            "| target pass with the draft loaded / without | Auto / off | Auto / off (draft loaded in both) "
            "| Auto drafted per answer | greedy outputs identical | target |",
            "|---|---|---|---|---|---|",
            f"| {report['pass_cost_with_draft_loaded']:.3f}x | {report['auto_vs_off']:.3f}x | "
            f"{report['auto_vs_off_with_draft_loaded']:.3f}x | {report['auto_drafted_per_answer']:g} tokens | "
            f"{'yes' if report['greedy_outputs_identical'] else 'NO'} | "
            + ("met" if report["target_met"] else "**missed**")
            + " |",
        ]
    )


def run(args: argparse.Namespace, prompt: str) -> int:
    report = measure(args, prompt, max(args.repeats, 5))
    write_report(args.out, "unused-draft", report, markdown(report))
    return 0
