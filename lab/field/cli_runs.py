"""The field bench through ``specchat generate``: the first answer on a new and on a known machine
(``first-answer``), and Auto against plain decoding on a busy machine (``busy``).

Every answer is a process of its own, as a user's one-shot command is, timed from start to exit
(the wall time a user waits) beside what its JSON reports (``ttft_s``, decoding tokens/s).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop_app.bench.quiet import wait_for_quiet
from lab.field.loads import background
from lab.field.paired import Paired, alternating
from lab.report import markdown_table

FIRST_PROMPT = "Write a short poem about a cat."
FIRST_TOKENS = 64
SIDES = ("off", "auto")
# Done-when targets (issue 45): Auto's wall time over off's, a new home and a known machine
FRESH_TARGET = 1.2
KNOWN_TARGET = 1.05
BUSY_TARGET = 0.97  # Auto's decoding speed over off's under load
ANSWER_TIMEOUT_S = 900.0  # a fresh home under load once took 214 s to its first token


@dataclass(frozen=True)
class CliRun:
    """One ``specchat generate --json`` process."""

    wall_s: float
    ttft_s: float
    tokens: int
    decode_s: float
    text: str

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.decode_s if self.decode_s > 0 else 0.0


def generate(args: argparse.Namespace, prompt: str, spec: str, home: str, max_tokens: int) -> CliRun:
    """One answer by the CLI in its own process, user data in ``home``."""
    command = [sys.executable, "-m", "desktop_app", "generate", "--prompt", prompt, "--spec", spec]
    command += ["--max-tokens", str(max_tokens), "--json"]
    if args.target:
        command += ["--target", str(args.target)]
    if args.threads:
        command += ["--threads", str(args.threads)]
    start = time.perf_counter()
    out = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=ANSWER_TIMEOUT_S,
        env={**os.environ, "SPECCHAT_HOME": home},
    )
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"specchat generate --spec {spec} exited with {out.returncode}: {out.stderr[-800:]}")
    answer = json.loads(out.stdout)
    stats = answer["stats"]
    return CliRun(
        wall, float(stats["ttft_s"]), int(stats["generated_tokens"]), float(stats["decode_s"]), answer["text"]
    )


def _home(home: str | None) -> AbstractContextManager[str]:
    """``home`` itself, or when None a new one, removed afterwards."""
    return nullcontext(home) if home is not None else tempfile.TemporaryDirectory(prefix="specchat-field-home-")


def _pair(args: argparse.Namespace, load: str, turn: int, home: str | None, label: str) -> dict[str, CliRun]:
    """Off and Auto back to back under ``load`` (the first alternating by ``turn``), each in
    ``home`` or, when None, in a new home of its own."""
    wait_for_quiet(args.quiet_wait)
    runs: dict[str, CliRun] = {}
    with background(load):
        for spec in alternating(SIDES, turn):
            with _home(home) as used:
                runs[spec] = generate(args, FIRST_PROMPT, spec, used, FIRST_TOKENS)
            run = runs[spec]
            print(
                f"  {load} {label} round {turn + 1} {spec:4}: wall {run.wall_s:6.2f} s, ttft {run.ttft_s:6.3f} s",
                file=sys.stderr,
                flush=True,
            )
    return runs


def first_answer(args: argparse.Namespace) -> dict[str, Any]:
    """Per load, a new home for every answer, then one home kept across answers (after one
    warm-up answer of each mode): the whole process's wall time and its ``ttft_s``."""
    rows: list[dict[str, Any]] = []
    for load in args.loads:
        for variant in ("fresh home", "known machine"):
            wall, ttft, rest = Paired(SIDES), Paired(SIDES), Paired(SIDES)
            same = 0
            with tempfile.TemporaryDirectory(prefix="specchat-field-known-") as known:
                home = known if variant == "known machine" else None
                if home is not None:
                    _pair(args, load, 0, home, "warm-up")
                for r in range(args.repeats):
                    runs = _pair(args, load, r, home, variant)
                    for spec, run in runs.items():
                        wall.add(spec, run.wall_s)
                        ttft.add(spec, run.ttft_s)
                        rest.add(spec, run.wall_s - run.ttft_s - run.decode_s)
                    same += runs["off"].text == runs["auto"].text
            ratio = wall.ratio()
            target = FRESH_TARGET if variant == "fresh home" else KNOWN_TARGET
            rows.append(
                {
                    "load": load,
                    "variant": variant,
                    "wall_s": {s: round(wall.median(s), 3) for s in SIDES},
                    "ttft_s": {s: round(ttft.median(s), 3) for s in SIDES},
                    # start-up, loading and any wait that ttft_s does not count
                    "outside_ttft_and_decode_s": {s: round(rest.median(s), 3) for s in SIDES},
                    "auto_over_off_wall": round(ratio, 3),
                    "target": target,
                    "target_met": ratio <= target,
                    "auto_text_same_as_off": f"{same}/{args.repeats}",
                    "runs": {"wall_s": wall.runs, "ttft_s": ttft.runs, "outside_ttft_and_decode_s": rest.runs},
                }
            )
    return {"prompt": FIRST_PROMPT, "max_tokens": FIRST_TOKENS, "rounds": args.repeats, "rows": rows}


def first_answer_table(report: dict[str, Any]) -> str:
    rows = [
        [
            row["load"],
            row["variant"],
            f"{row['wall_s']['off']:.2f}",
            f"{row['wall_s']['auto']:.2f}",
            f"{row['auto_over_off_wall']:.2f}x",
            f"<= {row['target']}x: " + ("met" if row["target_met"] else "**missed**"),
            f"{row['ttft_s']['off']:.3f}",
            f"{row['ttft_s']['auto']:.3f}",
            f"{row['outside_ttft_and_decode_s']['off']:.2f} / {row['outside_ttft_and_decode_s']['auto']:.2f}",
            row["auto_text_same_as_off"],
        ]
        for row in report["rows"]
    ]
    caption = (
        f'"{report["prompt"]}", {report["max_tokens"]} tokens, `specchat generate` per answer; '
        f"median of {report['rounds']} rounds (ratio: median of same-round ratios)"
    )
    headers = ["load", "home", "off wall s", "auto wall s", "auto / off wall", "target", "off ttft_s", "auto ttft_s"]
    headers += ["off / auto s outside ttft_s and decoding", "same text"]
    return markdown_table(caption, headers, rows)


def busy(args: argparse.Namespace, prompts: dict[str, list[str]]) -> dict[str, Any]:
    """Per load, Auto against off on one prompt of each category per round (each round starting
    each category at another prompt), one home per load kept across answers (a warm-up answer of
    each mode first): decoding tokens/s of the round's answers, tokens over seconds."""
    from lab.peer_api import rotated

    rows: list[dict[str, Any]] = []
    for load in args.loads:
        speed = Paired(SIDES)
        same = total = 0
        with tempfile.TemporaryDirectory(prefix="specchat-field-busy-") as home:
            wait_for_quiet(args.quiet_wait)
            with background(load):
                for spec in SIDES:
                    generate(args, FIRST_PROMPT, spec, home, 16)  # the thread count and Auto's costs
            for r in range(args.repeats):
                wait_for_quiet(args.quiet_wait)
                tokens = {s: 0 for s in SIDES}
                seconds = {s: 0.0 for s in SIDES}
                with background(load):
                    for i, category in enumerate(prompts):
                        prompt = rotated(prompts[category], r)[0]
                        texts = {}
                        for spec in alternating(SIDES, r + i):
                            run = generate(args, prompt, spec, home, args.max_tokens)
                            tokens[spec] += run.tokens
                            seconds[spec] += run.decode_s
                            texts[spec] = run.text
                            print(
                                f"  {load} round {r + 1} {category:8} {spec:4}: {run.tokens_per_s:6.1f} tok/s",
                                file=sys.stderr,
                                flush=True,
                            )
                        same += texts["off"] == texts["auto"]
                        total += 1
                for spec in SIDES:
                    speed.add(spec, tokens[spec] / seconds[spec])
        ratio = speed.ratio()
        rows.append(
            {
                "load": load,
                "tok_s": {s: round(speed.median(s), 1) for s in SIDES},
                "auto_over_off": round(ratio, 3),
                "target": BUSY_TARGET,
                "target_met": ratio >= BUSY_TARGET,
                "auto_text_same_as_off": f"{same}/{total}",
                "runs": speed.runs,
            }
        )
    model = Path(args.target).name if args.target else "the built-in model"
    return {
        "model": model,
        "categories": list(prompts),
        "max_tokens": args.max_tokens,
        "rounds": args.repeats,
        "rows": rows,
    }


def busy_table(report: dict[str, Any]) -> str:
    rows = [
        [
            row["load"],
            f"{row['tok_s']['off']:.1f}",
            f"{row['tok_s']['auto']:.1f}",
            f"{row['auto_over_off']:.2f}x",
            f">= {row['target']}x: " + ("met" if row["target_met"] else "**missed**"),
            row["auto_text_same_as_off"],
        ]
        for row in report["rows"]
    ]
    caption = (
        f"{report['model']}, `specchat generate`, one {', '.join(report['categories'])} prompt per round, "
        f"{report['max_tokens']} tokens; decoding tok/s, median of {report['rounds']} rounds "
        "(ratio: median of same-round ratios)"
    )
    return markdown_table(caption, ["load", "off tok/s", "auto tok/s", "auto / off", "target", "same text"], rows)
