"""``specchat bench --peer DIR``: our prompt lookup against llama.cpp's own ``ngram-simple``.

Both sides get the same raw prompt (the first rewrite prompt, no chat template), the same model,
threads and answer length, at temperature 0, each run in a fresh process. Our side is
``specchat generate --spec on --drafter ngram`` for each fixed k; theirs is
``llama-speculative-simple --spec-type ngram-simple`` (built from the same vendored sources by
``shared/tools/build-llama-peer.sh``) for each lookup size n and draft size m. The
configurations are interleaved, the order rotating each round; each side's best configuration is
the one with the best median, and the reported figure is the median of the per-round ratios of
the two bests (decode tokens/s, prompt processing excluded on both sides).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

OUR_K = (4, 8, 12)
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
    configs = [("ours", k) for k in OUR_K] + [("peer", nm) for nm in PEER_NM]
    runs: dict[str, list[float]] = {}
    rounds = max(args.repeats, 3)
    for r in range(rounds):
        order = configs[r % len(configs):] + configs[: r % len(configs)]
        for side, config in order:
            if side == "ours":
                assert isinstance(config, int)
                name, speed = f"ours k={config}", _ours(model, prompt, config, args.max_tokens, threads)
            else:
                assert isinstance(config, tuple)
                n, m = config
                name, speed = f"peer n={n} m={m}", _peer(binary, model, prompt, n, m, args.max_tokens, threads)
            runs.setdefault(name, []).append(speed)
            print(f"  round {r + 1} {name:16} {speed:7.1f} tok/s", file=sys.stderr, flush=True)
    medians = {name: statistics.median(v) for name, v in runs.items()}
    ours = max((n for n in medians if n.startswith("ours")), key=medians.__getitem__)
    peer = max((n for n in medians if n.startswith("peer")), key=medians.__getitem__)
    ratio = statistics.median(a / b for a, b in zip(runs[ours], runs[peer]))
    return {"model": str(model), "threads": threads, "max_tokens": args.max_tokens, "rounds": rounds,
            "medians": medians, "best_ours": ours, "best_peer": peer, "ours_vs_peer": round(ratio, 3), "runs": runs}
