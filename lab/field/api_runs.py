"""The field bench through the API, against llama.cpp's ``llama-server`` (both fresh per round,
both alive at once, the same model, context and threads, temperature 0, non-streamed as an
agent's side request is): two long conversations asked in turn (``interleaved``), and the cold
reading of a long prompt (``prompt-read``).

Each request goes to both servers back to back, the one going first alternating request by
request; the servers' caches are their own, so the order leaves each one's state as a lone
user's would be. Each round has documents of its own (seeded by round), never seen before.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx

from desktop_app.bench.quiet import wait_for_quiet
from lab.field.documents import document
from lab.field.paired import Paired, alternating, follow_ups, interleaving, median_ratio
from lab.peer_api import server
from lab.report import markdown_table

SIDES = ("specchat", "llama-server")
CONFIGS = {"specchat": "ours auto", "llama-server": "peer plain"}  # lab.peer_api's names: the defaults
INTERLEAVED_CTX = 8192
CONVERSATIONS = ("A", "B")
REQUESTS = 5  # A, B, A, B, A
ANSWER_TOKENS = 64
QUESTIONS = (
    "Summarize this report in three sentences.",
    "Which people in the report repaired or rebuilt something? Answer with a list.",
    "Which months does the report mention?",
)
FOLLOW_UP_TARGET_S = 1.5  # issue 45, at 2.5k tokens


@dataclass(frozen=True)
class Reply:
    """One non-streamed answer: its text, the seconds from sending to the whole reply, and the
    server's own figures where it gives them (``timings``: llama-server's, and ours alike)."""

    text: str
    seconds: float
    prompt_tokens: int
    prompt_new: int | None  # the prompt tokens it read, not restored from a cache
    prompt_ms: float | None


def ask_whole(url: str, messages: list[dict[str, str]], max_tokens: int, extra: dict[str, Any]) -> Reply:
    body = {"model": "any", "messages": messages, "temperature": 0, "max_tokens": max_tokens, "stream": False}
    with httpx.Client(timeout=1800) as client:
        start = time.perf_counter()
        reply = client.post(url + "/v1/chat/completions", json={**body, **extra})
        seconds = time.perf_counter() - start
    reply.raise_for_status()
    data = reply.json()
    timings = data.get("timings") or {}
    return Reply(
        data["choices"][0]["message"].get("content") or "",
        seconds,
        int((data.get("usage") or {}).get("prompt_tokens", 0)),
        timings.get("prompt_n"),
        timings.get("prompt_ms"),
    )


@contextlib.contextmanager
def both_servers(args: argparse.Namespace, ctx: int) -> Iterator[dict[str, tuple[str, dict[str, Any]]]]:
    """Both servers, fresh, loaded, past a first short request and then a quiet machine (Auto
    measures after loading; a first connection costs something too)."""
    with contextlib.ExitStack() as stack:
        live = {s: stack.enter_context(server(CONFIGS[s], args.model, args.peer, args.threads, ctx)) for s in SIDES}
        for url, extra in live.values():
            ask_whole(url, [{"role": "user", "content": "Hi"}], 4, extra)
        wait_for_quiet(args.quiet_wait)
        yield live


def _first_message(doc: str, question: str) -> str:
    return f"Read this report and answer my questions about it.\n\n{doc}\n\n{question}"


def interleaved(args: argparse.Namespace, count: Callable[[str], int]) -> dict[str, Any]:
    """Per document size, rounds of A, B, A, B, A: per-request seconds of each side."""
    order = interleaving(CONVERSATIONS, REQUESTS)
    again = follow_ups(order)
    sizes: list[dict[str, Any]] = []
    for size in args.doc_tokens:
        per_request = [Paired(SIDES) for _ in order]
        prompt_ms = [Paired(SIDES) for _ in order]  # the servers' own prefill timings
        total = Paired(SIDES)
        for r in range(args.repeats):
            docs = {c: document(2 * r + i, size, count) for i, c in enumerate(CONVERSATIONS)}
            history: dict[str, dict[str, list[dict[str, str]]]] = {s: {c: [] for c in CONVERSATIONS} for s in SIDES}
            seconds = {s: 0.0 for s in SIDES}
            wait_for_quiet(args.quiet_wait)
            with both_servers(args, INTERLEAVED_CTX) as live:
                for i, conversation in enumerate(order):
                    question = QUESTIONS[order[:i].count(conversation)]
                    for side in alternating(SIDES, r + i):
                        messages = history[side][conversation]
                        content = question if messages else _first_message(docs[conversation], question)
                        messages.append({"role": "user", "content": content})
                        url, extra = live[side]
                        reply = ask_whole(url, messages, ANSWER_TOKENS, extra)
                        messages.append({"role": "assistant", "content": reply.text})
                        per_request[i].add(side, reply.seconds)
                        prompt_ms[i].add(side, float("nan") if reply.prompt_ms is None else reply.prompt_ms)
                        seconds[side] += reply.seconds
                        print(
                            f"  {size} tokens round {r + 1} request {i + 1} ({conversation}) {side:12}: "
                            f"{reply.seconds:6.2f} s, prompt {reply.prompt_tokens} tokens, read {reply.prompt_new} "
                            f"in {reply.prompt_ms} ms",
                            file=sys.stderr,
                            flush=True,
                        )
            for side in SIDES:
                total.add(side, seconds[side])
        ours, theirs = (total.runs[s] for s in SIDES)
        follow_up_s = {s: max(p.median(s) for p, f in zip(per_request, again) if f) for s in SIDES}
        sizes.append(
            {
                "doc_tokens": size,
                "requests": [f"{c} ({'follow-up' if f else 'cold'})" for c, f in zip(order, again)],
                "seconds": {s: [round(p.median(s), 2) for p in per_request] for s in SIDES},
                "total_s": {s: round(total.median(s), 2) for s in SIDES},
                "specchat_over_llama_server_total": round(median_ratio(ours, theirs), 3),
                "speed_vs_llama_server": round(median_ratio(theirs, ours), 3),
                "slowest_follow_up_s": {s: round(v, 2) for s, v in follow_up_s.items()},
                "cold_first_read_s": {s: round(per_request[0].median(s), 2) for s in SIDES},
                "runs": {
                    "total_s": total.runs,
                    "per_request_s": [p.runs for p in per_request],
                    "per_request_server_prompt_ms": [p.runs for p in prompt_ms],
                },
            }
        )
    return {
        "model": str(args.model),
        "threads": args.threads,
        "ctx": INTERLEAVED_CTX,
        "rounds": args.repeats,
        "sizes": sizes,
    }


def interleaved_table(report: dict[str, Any]) -> str:
    rows = []
    for row in report["sizes"]:
        for side in SIDES:
            ratios = (
                [f"{row['specchat_over_llama_server_total']:.2f}x", f"{row['speed_vs_llama_server']:.2f}x"]
                if side == SIDES[0]
                else ["", ""]
            )
            seconds = [f"{v:.2f}" for v in row["seconds"][side]]
            rows.append([f"{row['doc_tokens']} tokens", side, *seconds, f"{row['total_s'][side]:.2f}", *ratios])
    caption = (
        f"{Path(report['model']).name}, {report['threads']} threads, both servers at --ctx {report['ctx']}, "
        f"non-streamed, temperature 0, {ANSWER_TOKENS} tokens; two conversations asked A, B, A, B, A; "
        f"seconds, median of {report['rounds']} rounds (ratios: median of same-round ratios)"
    )
    requests = report["sizes"][0]["requests"] if report["sizes"] else []
    headers = ["document", "server", *requests, "total s", "SpecChat / llama-server time", "speed vs llama-server"]
    follow = ", ".join(
        f"{r['doc_tokens']} tokens: {r['slowest_follow_up_s']['specchat']:.2f} s" for r in report["sizes"]
    )
    return (
        markdown_table(caption, headers, rows)
        + f"\n\nSpecChat's slowest follow-up (median over rounds): {follow} (target at 2.5k: <= {FOLLOW_UP_TARGET_S} s)"
    )
