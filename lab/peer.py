"""``python -m lab peer DIR``: our prompt lookup against llama.cpp's own ``ngram-simple``.

Both sides get the same raw prompt (the first rewrite prompt, no chat template), the same model,
threads and answer length, at temperature 0, each run in a fresh process. Our side is
``specchat generate --spec on --drafter ngram`` for each fixed k; theirs is
``llama-speculative-simple --spec-type ngram-simple`` (built from the same vendored sources by
``shared/tools/build-llama-peer.sh``) for each lookup size n and draft size m, with its default
attention (``-fa auto``: flash attention, where the CPU supports it) and with ``-fa off``, as
ours computes on the CPU (so the loops are compared, not only the attention kernels). The
configurations are interleaved, the order rotating each round; each side's best configuration is
the one with the best median. Then our best runs back to back with their best and with their
best at their default attention (the order rotating, each round after the machine went idle),
and the reported figures are the medians of the per-round ratios (decode tokens/s, prompt
processing excluded on both sides): two runs a dozen configurations apart see different
machines on a shared computer, two adjacent runs the same one.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop_app.bench.quiet import wait_for_quiet

OUR_K = (4, 8, 12)
FINAL_ROUNDS_PER_REPEAT = 2  # back-to-back rounds of the bests, per --repeats
PEER_NM = tuple((n, m) for n in (2, 3, 4) for m in (4, 8, 12))
PEER_FA = ("auto", "off")  # their default attention, and ours on the CPU
_DECODED = re.compile(r"decoded\s+(\d+) tokens in\s+([\d.]+) seconds, speed:\s+([\d.]+) t/s")


def _ours(model: Path, prompt: str, k: int, tokens: int, threads: int) -> float:
    command = [sys.executable, "-m", "desktop_app"] if not getattr(sys, "frozen", False) else [sys.executable]
    out = subprocess.run(
        [
            *command,
            "generate",
            "--target",
            str(model),
            "--raw",
            "--prompt",
            prompt,
            "--spec",
            "on",
            "--drafter",
            "ngram",
            "--draft-max",
            str(k),
            "--max-tokens",
            str(tokens),
            "--threads",
            str(threads),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return float(json.loads(out.stdout)["stats"]["decode_tokens_per_s"])


def _peer(binary: Path, model: Path, prompt: str, n: int, m: int, fa: str, tokens: int, threads: int) -> float:
    out = subprocess.run(
        [
            str(binary),
            "-m",
            str(model),
            "-p",
            prompt,
            "-n",
            str(tokens),
            "-t",
            str(threads),
            "--temp",
            "0",
            "--spec-type",
            "ngram-simple",
            "--spec-ngram-simple-size-n",
            str(n),
            "--spec-ngram-simple-size-m",
            str(m),
            "-fa",
            fa,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    found = _DECODED.search(out.stdout + out.stderr)
    if found is None:
        raise ValueError(f"llama-speculative-simple printed no speed line:\n{out.stderr[-2000:]}")
    return float(found.group(3))


def measure(args: argparse.Namespace, prompt: str) -> dict[str, Any]:
    from desktop_app.engine import default_model_path

    binary = Path(args.peer) / "llama-speculative-simple"
    if not binary.exists():
        raise ValueError(
            f"{binary} not found: build it with shared/tools/build-llama-peer.sh DIR and pass DIR/build/bin"
        )
    model = args.target or default_model_path()
    threads = args.threads or 2
    tokens = args.max_tokens
    configs: dict[str, Callable[[], float]] = {
        **{f"ours k={k}": functools.partial(_ours, model, prompt, k, tokens, threads) for k in OUR_K},
        **{
            f"peer n={n} m={m} fa={fa}": functools.partial(_peer, binary, model, prompt, n, m, fa, tokens, threads)
            for fa in PEER_FA
            for n, m in PEER_NM
        },
    }
    names = list(configs)

    def run(name: str) -> float:
        return configs[name]()

    runs: dict[str, list[float]] = {}
    rounds = max(args.repeats, 3)
    for r in range(rounds):
        wait_for_quiet(args.quiet_wait)
        for name in names[r % len(names) :] + names[: r % len(names)]:
            runs.setdefault(name, []).append(speed := run(name))
            print(f"  round {r + 1} {name:22} {speed:7.1f} tok/s", file=sys.stderr, flush=True)
    medians = {name: statistics.median(v) for name, v in runs.items()}

    def best(prefix: str, suffix: str = "") -> str:
        return max((n for n in medians if n.startswith(prefix) and n.endswith(suffix)), key=medians.__getitem__)

    ours = best("ours")
    # Their best configuration, and their best at their default attention when that differs.
    peers = list(dict.fromkeys([best("peer"), best("peer", f"fa={PEER_FA[0]}")]))
    finalists = [ours, *peers]
    speeds: dict[str, list[float]] = {name: [] for name in finalists}
    for p in range(FINAL_ROUNDS_PER_REPEAT * max(args.repeats, 1)):
        wait_for_quiet(args.quiet_wait)
        for name in (
            finalists[p % len(finalists) :] + finalists[: p % len(finalists)]
        ):  # back to back, the order rotating
            speeds[name].append(run(name))
        print(
            f"  final round {p + 1} " + "  ".join(f"{n} {speeds[n][-1]:7.1f}" for n in finalists),
            file=sys.stderr,
            flush=True,
        )
    ratios = {peer: round(statistics.median(a / b for a, b in zip(speeds[ours], speeds[peer])), 3) for peer in peers}
    return {
        "model": str(model),
        "threads": threads,
        "max_tokens": args.max_tokens,
        "rounds": rounds,
        "medians": medians,
        "best_ours": ours,
        "best_peer": peers[0],
        "ours_vs_peer": ratios[peers[0]],
        "ours_vs": ratios,
        "paired_runs": speeds,
        "runs": runs,
    }
