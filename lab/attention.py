"""``python -m lab attention``: flash attention on against off, on this machine's CPU.

llama.cpp's automatic choice enables flash attention wherever the backend supports it; SpecChat
leaves it off for a model on the CPU (``model.runs_on_cpu``). This measures that choice: two
engines load the same target, one with flash attention forced on, and in interleaved rounds
(the order alternating) each answers a shallow prompt (one short message) and a deep one (the
last turn of the first multi-turn conversation, its earlier turns answered), with speculation
off and with Auto. Reported per prompt and mode: median decode tokens/s with each kernel and
the median of the per-round ratios (off over on).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

from desktop_app.bench.quiet import wait_for_quiet
from desktop_app.bench.runner import MULTI_TURN, load_prompts, single_prompts, timed_turns
from desktop_app.engine import Engine, default_model_path
from desktop_app.engine.api import GenerateRequest, Message, ModelOptions, SpecMode
from desktop_app.engine.events import final_result
from lab.report import write_report

KERNELS = {"flash off": False, "flash on": True}
MODES = (SpecMode.OFF, SpecMode.AUTO)


def _engine(args: argparse.Namespace, flash: bool) -> Engine:
    engine = Engine()
    engine.load_target(
        args.target or default_model_path(),
        ModelOptions(n_ctx=args.ctx, n_threads=args.threads, n_gpu_layers=0, flash_attn=flash),
    )
    engine.prepare_auto(None, max(args.draft_max))
    return engine


def _speed(engine: Engine, messages: list[Message], mode: SpecMode, args: argparse.Namespace) -> tuple[float, int]:
    engine.forget_last_answer()
    done = final_result(
        engine.generate(
            GenerateRequest(messages=messages, max_tokens=args.max_tokens, spec=mode, draft_max=max(args.draft_max))
        )
    )
    return done.stats.decode_tokens_per_s, done.stats.prompt_tokens


def measure(args: argparse.Namespace) -> dict[str, Any]:
    prompts = load_prompts(args.prompts)
    engines = {name: _engine(args, flash) for name, flash in KERNELS.items()}
    first = next(iter(engines.values()))
    conversations = [p for p in prompts[MULTI_TURN] if not isinstance(p, str)]
    cases: dict[str, list[Message]] = {
        "shallow": [{"role": "user", "content": single_prompts(prompts["chat"])[0]}],
        "deep": timed_turns(first, conversations[0], args)[-1],
    }
    speeds: dict[tuple[str, str, str], list[float]] = {}
    depth: dict[str, int] = {}
    for r in range(max(args.repeats, 1)):
        wait_for_quiet(args.quiet_wait)
        for case, messages in cases.items():
            for mode in MODES:
                order = list(engines) if r % 2 == 0 else list(reversed(engines))
                for name in order:
                    for engine in engines.values():  # every answer starts from the same n-gram cache
                        engine.ngrams.clear()
                    speed, depth[case] = _speed(engines[name], messages, mode, args)
                    speeds.setdefault((case, mode.value, name), []).append(speed)
                    print(
                        f"  round {r + 1} {case:8} {mode.value:5} {name:10} {speed:7.1f} tok/s",
                        file=sys.stderr,
                        flush=True,
                    )
    rows = []
    for case in cases:
        for mode in MODES:
            off, on = (speeds[(case, mode.value, name)] for name in KERNELS)
            rows.append(
                {
                    "prompt": case,
                    "prompt_tokens": depth[case],
                    "mode": mode.value,
                    "flash_off_tokens_per_s": round(statistics.median(off), 1),
                    "flash_on_tokens_per_s": round(statistics.median(on), 1),
                    "off_vs_on": round(statistics.median(a / b for a, b in zip(off, on)), 3),
                }
            )
    return {
        "model": str(args.target or default_model_path()),
        "threads": args.threads,
        "max_tokens": args.max_tokens,
        "rounds": max(args.repeats, 1),
        "rows": rows,
        "runs": {" / ".join(k): v for k, v in speeds.items()},
    }


def table(report: dict[str, Any]) -> str:
    lines = [
        "| prompt | prompt tokens | speculation | flash attention off tok/s | on tok/s | off vs on (paired) |",
        "|---|---|---|---|---|---|",
    ]
    for row in report["rows"]:
        lines.append(
            f"| {row['prompt']} | {row['prompt_tokens']} | {row['mode']} | "
            f"{row['flash_off_tokens_per_s']:.1f} | {row['flash_on_tokens_per_s']:.1f} | "
            f"**{row['off_vs_on']:.2f}x** |"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    report = measure(args)
    write_report(args.out, "attention", report, table(report))
    return 0
