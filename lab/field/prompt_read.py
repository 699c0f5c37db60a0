"""``prompt-read``: how long SpecChat's API and ``llama-server`` take to read a long prompt cold.

Each round both servers (fresh, alive at once) read a document of each size that neither has
seen, answering one token, the one going first alternating: the wall time of the request and
each server's own prefill timing (``timings.prompt_ms``: llama-server's field, which our API
fills from the engine's prefill seconds). Sizes beyond what the model was trained on are not
run, and the report says so (the built-in SmolLM2-135M was trained at 8,192 tokens).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop_app.bench.quiet import wait_for_quiet
from lab.field.api_runs import SIDES, ask_whole, both_servers
from lab.field.documents import document
from lab.field.paired import Paired, alternating, median_ratio
from lab.report import markdown_table

QUESTION = "What is this report about? Answer in one word."
MARGIN = 256  # the chat template, the question and the answer, above the document
CTX_STEP = 1024


def runnable(sizes: list[int], trained: int | None) -> tuple[list[int], dict[int, str]]:
    """The sizes the model can read, and why each other one is left out."""
    if trained is None:
        return sizes, {}
    skipped = {
        s: f"not run: the model was trained at {trained:,} tokens; pass --target with a longer-context model"
        for s in sizes
        if s + MARGIN > trained
    }
    return [s for s in sizes if s not in skipped], skipped


def server_ctx(sizes: list[int]) -> int:
    """The servers' context: 8,192 as in the other API benches, more only for longer prompts."""
    need = max(sizes, default=0) + MARGIN
    return max(8192, -(-need // CTX_STEP) * CTX_STEP)


def prompt_read(args: argparse.Namespace, count: Callable[[str], int], trained: int | None) -> dict[str, Any]:
    sizes, skipped = runnable(list(args.read_tokens), trained)
    ctx = server_ctx(sizes)
    wall = {s: Paired(SIDES) for s in sizes}
    server_ms = {s: Paired(SIDES) for s in sizes}
    read = {s: {side: 0 for side in SIDES} for s in sizes}
    for r in range(args.repeats if sizes else 0):
        wait_for_quiet(args.quiet_wait)
        with both_servers(args, ctx) as live:
            for j, size in enumerate(sizes):
                content = f"{document(1000 + 10 * r + j, size, count)}\n\n{QUESTION}"
                for side in alternating(SIDES, r + j):
                    url, extra = live[side]
                    reply = ask_whole(url, [{"role": "user", "content": content}], 1, extra)
                    wall[size].add(side, reply.seconds)
                    server_ms[size].add(side, reply.prompt_ms if reply.prompt_ms is not None else float("nan"))
                    read[size][side] = reply.prompt_new if reply.prompt_new is not None else reply.prompt_tokens
                    print(
                        f"  {size} tokens round {r + 1} {side:12}: {reply.seconds:6.2f} s, server prompt_ms "
                        f"{reply.prompt_ms}, read {reply.prompt_new} of {reply.prompt_tokens} tokens",
                        file=sys.stderr,
                        flush=True,
                    )
    rows = []
    for size in sizes:
        ours, theirs = (wall[size].runs[s] for s in SIDES)
        ours_ms, theirs_ms = (server_ms[size].runs[s] for s in SIDES)
        rows.append(
            {
                "doc_tokens": size,
                "prompt_tokens_read": read[size],
                "wall_s": {s: round(wall[size].median(s), 3) for s in SIDES},
                "server_prompt_ms": {s: round(server_ms[size].median(s), 1) for s in SIDES},
                "speed_vs_llama_server_wall": round(median_ratio(theirs, ours), 3),
                "speed_vs_llama_server_server_ms": round(median_ratio(theirs_ms, ours_ms), 3),
                "runs": {"wall_s": wall[size].runs, "server_prompt_ms": server_ms[size].runs},
            }
        )
    return {
        "model": str(args.model),
        "threads": args.threads,
        "ctx": ctx,
        "rounds": args.repeats,
        "rows": rows,
        "not_run": {str(s): why for s, why in skipped.items()},
    }


def prompt_read_table(report: dict[str, Any]) -> str:
    rows = []
    for row in report["rows"]:
        w, ms, n = row["wall_s"], row["server_prompt_ms"], row["prompt_tokens_read"]
        rows.append(
            [
                str(row["doc_tokens"]),
                f"{n['specchat']} / {n['llama-server']}",
                f"{w['specchat']:.2f}",
                f"{w['llama-server']:.2f}",
                f"{row['speed_vs_llama_server_wall']:.2f}x",
                f"{ms['specchat']:.0f}",
                f"{ms['llama-server']:.0f}",
                f"{row['speed_vs_llama_server_server_ms']:.2f}x",
            ]
        )
    rows += [[size, why, *[""] * 6] for size, why in report["not_run"].items()]
    caption = (
        f"{Path(report['model']).name}, {report['threads']} threads, both servers at --ctx {report['ctx']}, a new "
        f"document per request, 1 token answered; median of {report['rounds']} rounds (speed ratios: "
        "llama-server's time over SpecChat's, median of same-round ratios; >= 1.0x: SpecChat reads faster)"
    )
    headers = ["document", "tokens read (SpecChat / llama-server)", "SpecChat wall s", "llama-server wall s"]
    headers += ["speed (wall)", "SpecChat prompt_ms", "llama-server prompt_ms", "speed (servers' prompt_ms)"]
    return markdown_table(caption, headers, rows)
