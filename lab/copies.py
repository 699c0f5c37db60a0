"""``python -m lab copies DIR``: long copies, SpecChat's Auto against llama-server's n-gram
speculation, on held-out prompts (issue 51: "as fast as ngram-mod on every prompt").

The prompts (lab/copy_prompts.toml) were written for this bench and Auto was never tuned on them:
code edits shown whole, rewrites and extractions that a small model answers mostly by copying.
Five configurations, each a fresh server process per round, all alive at once (lab/peer_api.py's
``live_servers``): ours off and Auto (``desktop_app serve``), llama-server plain, ``--spec-type
ngram-simple`` and ``--spec-type ngram-mod``. Every request goes to each of them in turn, the
order rotating request by request, streamed at temperature 0 through ``/v1/chat/completions``;
tokens are the model's tokenizer's count of the text, alike for both sides. Two workloads:

- ``new``: the ``new`` group's code edits, each once a round (the round starting at another
  prompt each time); a round's figure is its tokens over its seconds;
- ``again``: each prompt of the ``again`` group sent 4 times; a round's figure for a prompt is the
  median tokens/s of requests 2-4 (what a regenerate or an agent's retry waits for).

Two speeds per answer: the headline is the client's, tokens over the seconds from sending the
request to the last token (what a client waits for, prompt reading included); the second is the
server's decode speed, tokens over its ``timings.predicted_ms``. Ratios (Auto / ngram-mod, Auto /
the better of llama-server's spec types, chosen by its median figure) are the median over rounds
of same-round ratios, per prompt for ``again`` and per round for ``new``. Each answer's server
``timings`` (decode ms, drafted and accepted tokens; ours also target passes) are kept, and Auto's
greedy texts are checked against ours off's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lab.copy_prompts import CopyPrompt, load_copy_prompts, only
from lab.field.paired import median_ratio
from lab.peer_api import OURS, PEER_SPEC_TYPES, Answer, ask, live_servers, peer_cpu_flags, rotated, token_counter

CONFIGS = [*OURS, *PEER_SPEC_TYPES]
SPEC_TYPES = [n for n, spec in PEER_SPEC_TYPES.items() if spec is not None]
AGAIN = 4  # requests per `again` prompt and round; the figure is the median of those after the first
DEFAULT_ROUNDS = 3
DEFAULT_MAX_TOKENS = 256  # a 30-line function shown whole

Runs = list[dict[str, dict[str, list["Reply"]]]]  # per round, configuration and prompt: its replies


@dataclass(frozen=True)
class Reply:
    """One answer as the report shows it."""

    tokens: int
    seconds: float  # the client's, request to last token
    decode_ms: float  # the server's timings.predicted_ms
    drafted: int
    accepted: int
    target_passes: int | None  # ours only
    text: str

    @classmethod
    def of(cls, answer: Answer) -> Reply:
        t = answer.timings
        passes = (t.get("speculation") or {}).get("target_passes")
        return cls(
            answer.tokens,
            answer.seconds,
            float(t.get("predicted_ms") or 0.0),
            int(t.get("draft_n") or 0),  # llama-server leaves both out when it drafted nothing
            int(t.get("draft_n_accepted") or 0),
            None if passes is None else int(passes),
            answer.text,
        )

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds

    @property
    def decode_per_s(self) -> float:
        return self.tokens / self.decode_ms * 1000 if self.decode_ms > 0 else 0.0


def again_figure(replies: list[Reply], speed: Callable[[Reply], float]) -> float:
    """A round's figure for one repeated prompt: the median ``speed`` of the requests after the first."""
    return statistics.median(speed(r) for r in replies[1:])


def new_figure(replies: list[Reply], decode: bool = False) -> float:
    """A round's figure over the ``new`` prompts: all tokens over all seconds (client or decode)."""
    seconds = sum(r.decode_ms / 1000 if decode else r.seconds for r in replies)
    return sum(r.tokens for r in replies) / seconds if seconds > 0 else 0.0


def ratios(figures: dict[str, list[float]]) -> dict[str, Any]:
    """Per configuration one figure per round -> Auto over ngram-mod, over the better spec type
    (the one with the higher median), over ours off, and ours off over llama-server plain: each
    the median of the same-round ratios."""
    best = max(SPEC_TYPES, key=lambda n: statistics.median(figures[n]))
    return {
        "tokens_per_s": {n: round(statistics.median(v), 1) for n, v in figures.items()},
        "auto_vs_ngram_mod": round(median_ratio(figures["ours auto"], figures["peer ngram-mod"]), 3),
        "best_spec_type": best,
        "auto_vs_best_spec_type": round(median_ratio(figures["ours auto"], figures[best]), 3),
        "auto_vs_off": round(median_ratio(figures["ours auto"], figures["ours off"]), 3),
        "off_vs_peer_plain": round(median_ratio(figures["ours off"], figures["peer plain"]), 3),
    }


def _details(replies: list[Reply]) -> dict[str, Any]:
    """Medians of what the servers say about a configuration's answers to one prompt."""

    def med(values: list[float]) -> float:
        return round(statistics.median(values), 1)

    out: dict[str, Any] = {
        "tokens": med([r.tokens for r in replies]),
        "decode_ms": med([r.decode_ms for r in replies]),
        "drafted": med([r.drafted for r in replies]),
        "accepted": med([r.accepted for r in replies]),
    }
    if all(r.target_passes is not None for r in replies):
        out["target_passes"] = med([float(r.target_passes or 0) for r in replies])
    return out


def prompt_table(runs: Runs, prompt: CopyPrompt, repeated: bool) -> dict[str, Any]:
    """One prompt's row: per configuration its figures and server timings, and the ratios (client
    and decode speed). ``repeated``: an ``again`` prompt, whose first request of a round is left out."""
    names = list(runs[0])
    picked = [{n: rr[n][prompt.name][1:] if repeated else rr[n][prompt.name] for n in names} for rr in runs]

    def figures(speed: Callable[[Reply], float]) -> dict[str, list[float]]:
        return {n: [statistics.median(speed(x) for x in p[n]) for p in picked] for n in names}

    return {
        "kind": prompt.kind,
        "language": prompt.language,
        "client": ratios(figures(lambda r: r.tokens_per_s)),
        "decode": ratios(figures(lambda r: r.decode_per_s)),
        "servers": {n: _details([x for p in picked for x in p[n]]) for n in names},
        "answer": runs[0]["ours off"][prompt.name][0].text,  # ours off's first, to see that it copies
    }


def same_texts(runs: Runs, prompts: list[CopyPrompt], a: str = "ours auto", b: str = "ours off") -> str:
    """How many of ``a``'s answers to ``prompts`` are word for word ``b``'s to the same request."""
    pairs = [
        (x.text, y.text) for rr in runs for p in prompts for x, y in zip(rr[a][p.name], rr[b][p.name], strict=True)
    ]
    return f"{sum(x == y for x, y in pairs)}/{len(pairs)}"


def report(runs: Runs, prompts: dict[str, list[CopyPrompt]]) -> dict[str, Any]:
    """Figures, per-prompt rows and text checks of every round's replies."""
    out: dict[str, Any] = {"again": {}, "new": {}}
    if prompts["again"]:
        rows = {p.name: prompt_table(runs, p, repeated=True) for p in prompts["again"]}
        auto_vs_mod = [row["client"]["auto_vs_ngram_mod"] for row in rows.values()]
        out["again"] = {
            "prompts_auto_at_least_ngram_mod": f"{sum(r >= 1 for r in auto_vs_mod)}/{len(auto_vs_mod)}",
            "auto_vs_ngram_mod_median_over_prompts": round(statistics.median(auto_vs_mod), 3),
            "auto_vs_ngram_mod_lowest": round(min(auto_vs_mod), 3),
            "auto_text_same_as_off": same_texts(runs, prompts["again"]),
            "off_text_same_as_peer_plain": same_texts(runs, prompts["again"], "ours off", "peer plain"),
            "prompts": rows,
        }
    if prompts["new"]:
        names = list(runs[0])
        replies = [{n: [x for p in prompts["new"] for x in rr[n][p.name]] for n in names} for rr in runs]
        out["new"] = {
            "client": ratios({n: [new_figure(r[n]) for r in replies] for n in names}),
            "decode": ratios({n: [new_figure(r[n], decode=True) for r in replies] for n in names}),
            "auto_text_same_as_off": same_texts(runs, prompts["new"]),
            "off_text_same_as_peer_plain": same_texts(runs, prompts["new"], "ours off", "peer plain"),
            "prompts": {p.name: prompt_table(runs, p, repeated=False) for p in prompts["new"]},
        }
    return out


def _round(
    args: argparse.Namespace, r: int, prompts: dict[str, list[CopyPrompt]], count: Callable[[str], int]
) -> dict[str, dict[str, list[Reply]]]:
    """Round ``r``: the ``new`` prompts (starting at the r-th), then each ``again`` prompt AGAIN
    times, every request to each configuration's fresh server in turn, the order rotating."""
    steps = rotated(prompts["new"], r) if prompts["new"] else []
    steps += [p for p in prompts["again"] for _ in range(AGAIN)]
    names = rotated(CONFIGS, r)
    replies: dict[str, dict[str, list[Reply]]] = {n: {} for n in CONFIGS}
    with live_servers(names, args, Path(args.peer), count) as live:
        for i, prompt in enumerate(steps):
            for n in rotated(names, i):
                url, extra = live[n]
                answer = ask(url, [{"role": "user", "content": prompt.text}], args.max_tokens, extra, count)
                replies[n].setdefault(prompt.name, []).append(Reply.of(answer))
    return replies


def _shown(round_no: int, replies: dict[str, dict[str, list[Reply]]]) -> None:
    for n in CONFIGS:
        speeds = "  ".join(
            f"{name} {statistics.median(x.tokens_per_s for x in xs):6.1f}" for name, xs in replies[n].items()
        )
        print(f"  round {round_no} {n:18} {speeds}", file=sys.stderr, flush=True)


def add_copies_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("peer", type=Path, metavar="DIR", help="the folder of llama.cpp's built tools (llama-server)")
    p.add_argument(
        "--rounds", dest="repeats", type=int, metavar="N", help=f"rounds, fresh servers each (default {DEFAULT_ROUNDS})"
    )
    p.add_argument("--only", nargs="+", metavar="NAME", help="only these prompts (names in lab/copy_prompts.toml)")
    p.set_defaults(repeats=DEFAULT_ROUNDS, max_tokens=DEFAULT_MAX_TOKENS)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from desktop_app.engine import default_model_path

    if not (Path(args.peer) / "llama-server").exists():
        raise ValueError(f"{args.peer}/llama-server not found: build it with shared/tools/build-llama-peer.sh DIR")
    prompts = only(load_copy_prompts(), args.only)
    args.model = args.target or default_model_path()
    args.threads = args.threads or 2
    args.ctx = 4096
    count = token_counter(Path(args.model))
    runs: Runs = []
    for r in range(max(args.repeats, 1)):
        runs.append(_round(args, r, prompts, count))
        _shown(r + 1, runs[-1])
    return {
        "model": str(args.model),
        "threads": args.threads,
        "max_tokens": args.max_tokens,
        "rounds": len(runs),
        "peer_flags": peer_cpu_flags(),
        "prompts": {g: [p.name for p in ps] for g, ps in prompts.items()},
        **report(runs, prompts),
        "runs": [
            {
                n: {p: [{k: v for k, v in asdict(x).items() if k != "text"} for x in xs] for p, xs in c.items()}
                for n, c in rr.items()
            }
            for rr in runs
        ],
    }


def summary(result: dict[str, Any]) -> dict[str, Any]:
    """What the terminal shows: per prompt Auto's ratios, and each workload's totals."""
    shown: dict[str, Any] = {k: result[k] for k in ("model", "threads", "max_tokens", "rounds")}
    for workload in ("again", "new"):
        part = result[workload]
        if not part:
            continue
        shown[workload] = {k: v for k, v in part.items() if k != "prompts"}
        shown[workload]["prompts"] = {
            name: {
                side: {k: row[side][k] for k in ("auto_vs_ngram_mod", "auto_vs_best_spec_type")}
                for side in ("client", "decode")
            }
            for name, row in part["prompts"].items()
        }
    return shown
