"""``specchat bench --peer DIR``: our prompt lookup against llama.cpp's own ``ngram-simple``.

Both sides get the same raw prompt (the first rewrite prompt, no chat template), the same model,
threads and answer length, at temperature 0, each run in a fresh process. Our side is
``specchat generate --spec on --drafter ngram`` for each fixed k; theirs is
``llama-speculative-simple --spec-type ngram-simple`` (built from the same vendored sources by
``shared/tools/build-llama-peer.sh``) for each lookup size n and draft size m. The
configurations are interleaved, the order rotating each round; each side's best configuration is
the one with the best median. Then the two bests run in pairs, back to back (the order
alternating, each pair after the machine went idle), and the reported figure is the median of
the per-pair ratios (decode tokens/s, prompt processing excluded on both sides): two runs a
dozen configurations apart see different machines on a shared computer, two adjacent runs the
same one.
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
PAIRS_PER_REPEAT = 2  # back-to-back pairs of the two bests, per --repeats
PEER_NM = tuple((n, m) for n in (2, 3, 4) for m in (4, 8, 12))
_DECODED = re.compile(r"decoded\s+(\d+) tokens in\s+([\d.]+) seconds, speed:\s+([\d.]+) t/s")


def _ours(model: Path, prompt: str, k: int, tokens: int, threads: int) -> float:
    command = [sys.executable, "-m", "desktop_app"] if not getattr(sys, "frozen", False) else [sys.executable]
    out = subprocess.run(
        [*command, "generate", "--target", str(model), "--raw", "--prompt", prompt, "--spec", "on", "--drafter",
         "ngram", "--draft-max", str(k), "--max-tokens", str(tokens), "--threads", str(threads), "--json"],
        capture_output=True, text=True, timeout=600, check=True)
    return float(json.loads(out.stdout)["stats"]["decode_tokens_per_s"])


def _peer(binary: Path, model: Path, prompt: str, n: int, m: int, tokens: int, threads: int) -> float:
    out = subprocess.run(
        [str(binary), "-m", str(model), "-p", prompt, "-n", str(tokens), "-t", str(threads), "--temp", "0",
         "--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", str(n), "--spec-ngram-simple-size-m", str(m)],
        capture_output=True, text=True, timeout=600, check=True)
    found = _DECODED.search(out.stdout + out.stderr)
    if found is None:
        raise ValueError(f"llama-speculative-simple printed no speed line:\n{out.stderr[-2000:]}")
    return float(found.group(3))


def measure(args: argparse.Namespace, prompt: str) -> dict[str, Any]:
    from desktop_app.engine import default_model_path

    binary = Path(args.peer) / "llama-speculative-simple"
    if not binary.exists():
        raise ValueError(f"{binary} not found: build it with shared/tools/build-llama-peer.sh DIR "
                         "and pass DIR/build/bin")
    model = args.target or default_model_path()
    threads = args.threads or 2
    tokens = args.max_tokens
    configs: dict[str, Callable[[], float]] = {
        **{f"ours k={k}": functools.partial(_ours, model, prompt, k, tokens, threads) for k in OUR_K},
        **{f"peer n={n} m={m}": functools.partial(_peer, binary, model, prompt, n, m, tokens, threads)
           for n, m in PEER_NM},
    }
    names = list(configs)

    def run(name: str) -> float:
        return configs[name]()

    runs: dict[str, list[float]] = {}
    rounds = max(args.repeats, 3)
    for r in range(rounds):
        wait_for_quiet(args.quiet_wait)
        for name in names[r % len(names):] + names[: r % len(names)]:
            runs.setdefault(name, []).append(speed := run(name))
            print(f"  round {r + 1} {name:16} {speed:7.1f} tok/s", file=sys.stderr, flush=True)
    medians = {name: statistics.median(v) for name, v in runs.items()}
    ours = max((n for n in medians if n.startswith("ours")), key=medians.__getitem__)
    peer = max((n for n in medians if n.startswith("peer")), key=medians.__getitem__)
    pairs: list[tuple[float, float]] = []
    for p in range(PAIRS_PER_REPEAT * max(args.repeats, 1)):
        wait_for_quiet(args.quiet_wait)
        if p % 2:
            theirs = run(peer)
            mine = run(ours)
        else:
            mine = run(ours)
            theirs = run(peer)
        pairs.append((mine, theirs))
        print(f"  pair {p + 1} {ours} {mine:7.1f}  {peer} {theirs:7.1f}  ratio {mine / theirs:.3f}",
              file=sys.stderr, flush=True)
    ratio = statistics.median(a / b for a, b in pairs)
    return {"model": str(model), "threads": threads, "max_tokens": args.max_tokens, "rounds": rounds,
            "medians": medians, "best_ours": ours, "best_peer": peer, "ours_vs_peer": round(ratio, 3),
            "pairs": pairs, "runs": runs}
