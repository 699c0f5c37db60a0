"""``documents``: questions over documents through the API, Auto against off and against llama-server.

Every configuration (ours ``off`` and ``auto`` through ``specchat serve``, the request's
``speculation`` field saying the same; llama-server plain and each ``--spec-type``) is a fresh
server per round, all alive at once, the same model, context and threads, temperature 0,
non-streamed. Each task's request goes to every server in turn, the order rotating task by task
and round by round (:func:`lab.field.paired.alternating`), after the machine went quiet, so a
machine that slows down for a minute slows every side alike. A figure is decoding speed by the
server's own account: ``timings.predicted_n`` over ``timings.predicted_ms`` (llama-server's
fields, which our API fills from the engine's figures); ratios are medians of same-round ratios
(:func:`lab.field.paired.median_ratio`). Auto's text must be off's, word for word, at temperature 0.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx

from desktop_app.bench.quiet import wait_for_quiet
from lab.field.document_tasks import (
    CATEGORIES,
    QUOTE,
    REST,
    SOURCES,
    TASKS,
    Task,
    copied_share,
    document_message,
    fingerprint,
    read_source,
    repeated_share,
)
from lab.field.paired import alternating, median_ratio
from lab.peer_api import OURS, PEER_SPEC_TYPES, peer_cpu_flags, server
from lab.report import markdown_table

CONFIGS = (*OURS, *PEER_SPEC_TYPES)  # ours off, ours auto, peer plain, peer ngram-simple, peer ngram-mod
CTX = 4096  # the longest document (~1,600 tokens), its question and the longest answer (400) fit
TARGETS = {QUOTE: 1.3, REST: 0.97}  # issue 50's done-when: Auto over off, per category


@dataclass(frozen=True)
class Decoded:
    """One answer by the server's own figures."""

    text: str
    tokens: int  # timings.predicted_n
    decode_ms: float  # timings.predicted_ms
    prompt_new: int  # timings.prompt_n: the prompt tokens read, not restored from a cache
    drafted: int
    accepted: int
    drafter: str  # ours: the speculation's drafter as the answer's stats name it; llama-server: ""
    target_passes: int

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.decode_ms * 1000 if self.decode_ms > 0 else float("nan")


def ask(url: str, content: str, max_tokens: int, extra: dict[str, Any]) -> Decoded:
    body = {"model": "any", "messages": [{"role": "user", "content": content}], "temperature": 0}
    body |= {"max_tokens": max_tokens, "stream": False, **extra}
    with httpx.Client(timeout=1800) as client:
        reply = client.post(url + "/v1/chat/completions", json=body)
    reply.raise_for_status()
    data = reply.json()
    timings = data.get("timings") or {}
    spec = timings.get("speculation") or {}
    return Decoded(
        text=data["choices"][0]["message"].get("content") or "",
        tokens=int(timings.get("predicted_n", 0)),
        decode_ms=float(timings.get("predicted_ms", 0.0)),
        prompt_new=int(timings.get("prompt_n", 0)),
        drafted=int(timings.get("draft_n", 0) or 0),
        accepted=int(timings.get("draft_n_accepted", 0) or 0),
        drafter=str(spec.get("drafter", "")),
        target_passes=int(spec.get("target_passes", 0) or 0),
    )


@contextlib.contextmanager
def all_servers(args: argparse.Namespace, names: list[str]) -> Iterator[dict[str, tuple[str, dict[str, Any]]]]:
    """Every configuration's fresh server, past a first short request, then a quiet machine (Auto
    measures the machine after loading)."""
    with contextlib.ExitStack() as stack:
        live = {n: stack.enter_context(server(n, args.model, args.peer, args.threads, CTX)) for n in names}
        for url, extra in live.values():
            ask(url, "Hi", 4, extra)
        wait_for_quiet(args.quiet_wait)
        yield live


def _round(args: argparse.Namespace, r: int, texts: dict[str, str], tasks: tuple[Task, ...]) -> dict[str, Any]:
    """Every task once on every configuration: per task, per configuration, the answer."""
    wait_for_quiet(args.quiet_wait)
    load_before = os.getloadavg()
    answers: dict[str, dict[str, Decoded]] = {t.name: {} for t in tasks}
    start = time.monotonic()
    with all_servers(args, alternating(CONFIGS, r)) as live:
        load_start = os.getloadavg()
        for i, task in enumerate(tasks):
            content = document_message(task.source, texts[task.source], task.question)
            for name in alternating(CONFIGS, r + i):
                url, extra = live[name]
                answer = ask(url, content, task.max_tokens, extra)
                answers[task.name][name] = answer
                print(
                    f"  round {r + 1} {task.name:18} {name:17}: {answer.tokens:4d} tokens "
                    f"{answer.tokens_per_s:6.1f} tok/s, drafted {answer.drafted} accepted {answer.accepted} "
                    f"{answer.drafter}",
                    file=sys.stderr,
                    flush=True,
                )
    return {
        "load_average_before": [round(v, 2) for v in load_before],
        "load_average_at_start": [round(v, 2) for v in load_start],
        "load_average_after": [round(v, 2) for v in os.getloadavg()],
        "seconds": round(time.monotonic() - start, 1),
        "answers": {t: {n: asdict(a) for n, a in by.items()} for t, by in answers.items()},
    }


def _speed(run: dict[str, Any], task: str, name: str) -> float:
    a = run["answers"][task][name]
    return a["tokens"] / a["decode_ms"] * 1000 if a["decode_ms"] > 0 else float("nan")


def _pooled(run: dict[str, Any], tasks: list[Task], name: str) -> float:
    """A category's tokens over its decoding seconds in one round (long answers weigh more)."""
    answers = [run["answers"][t.name][name] for t in tasks]
    return sum(a["tokens"] for a in answers) / sum(a["decode_ms"] for a in answers) * 1000


def _same(runs: list[dict[str, Any]], task: str, a: str, b: str) -> int:
    return sum(r["answers"][task][a]["text"] == r["answers"][task][b]["text"] for r in runs)


def summarize(runs: list[dict[str, Any]], texts: dict[str, str], tasks: tuple[Task, ...] = TASKS) -> dict[str, Any]:
    """Per task and per category: medians of same-round ratios, text equality, Auto's drafting,
    and what off's answers were (the share quoted from the document, the share repeating itself)."""
    peers = list(PEER_SPEC_TYPES)
    per_task: list[dict[str, Any]] = []
    for task in tasks:
        speeds = {n: [_speed(r, task.name, n) for r in runs] for n in CONFIGS}
        best_peer = max(peers, key=lambda p: statistics.median(speeds[p]))
        auto = [r["answers"][task.name]["ours auto"] for r in runs]
        off_texts = [r["answers"][task.name]["ours off"]["text"] for r in runs]
        per_task.append(
            {
                "task": task.name,
                "category": task.category,
                "document": task.source,
                "tokens": statistics.median(r["answers"][task.name]["ours off"]["tokens"] for r in runs),
                "tokens_per_s": {n: round(statistics.median(v), 1) for n, v in speeds.items()},
                "auto_vs_off": round(median_ratio(speeds["ours auto"], speeds["ours off"]), 3),
                "auto_vs_off_per_round": [round(a / b, 3) for a, b in zip(speeds["ours auto"], speeds["ours off"])],
                "best_peer": best_peer,
                "auto_vs_best_peer": round(median_ratio(speeds["ours auto"], speeds[best_peer]), 3),
                "off_vs_peer_plain": round(median_ratio(speeds["ours off"], speeds["peer plain"]), 3),
                "auto_text_same_as_off": f"{_same(runs, task.name, 'ours auto', 'ours off')}/{len(runs)}",
                "off_text_same_as_peer_plain": f"{_same(runs, task.name, 'ours off', 'peer plain')}/{len(runs)}",
                "auto_acceptance": round(sum(a["accepted"] for a in auto) / max(sum(a["drafted"] for a in auto), 1), 3),
                "auto_drafted_per_answer": round(statistics.mean(a["drafted"] for a in auto), 1),
                "auto_tokens_per_pass": round(
                    sum(a["tokens"] for a in auto) / max(sum(a["target_passes"] for a in auto), 1), 2
                ),
                "auto_drafters": sorted({a["drafter"] for a in auto}),
                "copied_from_document": round(
                    statistics.median(copied_share(t, texts[task.source]) for t in off_texts), 2
                ),
                "repeats_itself": round(statistics.median(repeated_share(t) for t in off_texts), 2),
            }
        )
    categories: dict[str, Any] = {}
    for category in CATEGORIES:
        chosen = [t for t in tasks if t.category == category]
        if not chosen:
            continue
        rows = [t for t in per_task if t["category"] == category]
        pooled = {n: [_pooled(r, chosen, n) for r in runs] for n in CONFIGS}
        median_of_tasks = round(statistics.median(t["auto_vs_off"] for t in rows), 3)
        categories[category] = {
            "tasks": len(rows),
            "auto_vs_off_median_of_tasks": median_of_tasks,
            "auto_vs_off_pooled": round(median_ratio(pooled["ours auto"], pooled["ours off"]), 3),
            "auto_vs_best_peer_median_of_tasks": round(statistics.median(t["auto_vs_best_peer"] for t in rows), 3),
            "tokens_per_s_pooled": {n: round(statistics.median(v), 1) for n, v in pooled.items()},
            "target": TARGETS[category],
            "target_met": median_of_tasks >= TARGETS[category],
        }
    return {"tasks": per_task, "categories": categories}


def documents_bench(args: argparse.Namespace, tasks: tuple[Task, ...] = TASKS) -> dict[str, Any]:
    texts = {s.name: read_source(s) for s in SOURCES}
    runs = [_round(args, r, texts, tasks) for r in range(args.repeats)]
    return {
        "model": str(args.model),
        "threads": args.threads,
        "ctx": CTX,
        "rounds": args.repeats,
        "peer_flags": peer_cpu_flags(),
        "documents": {s.name: {"path": str(s.path), "sha256_16": fingerprint(texts[s.name])} for s in SOURCES},
        "questions": {
            t.name: {"category": t.category, "question": t.question, "max_tokens": t.max_tokens} for t in tasks
        },
        **summarize(runs, texts, tasks),
        "runs": runs,
    }


def documents_table(report: dict[str, Any]) -> str:
    rows = []
    for t in report["tasks"]:
        s = t["tokens_per_s"]
        rows.append(
            [
                t["task"],
                t["category"],
                f"{t['tokens']:.0f}",
                f"{s['ours off']:.1f}",
                f"{s['ours auto']:.1f}",
                f"**{t['auto_vs_off']:.2f}x**",
                f"{t['best_peer']} {s[t['best_peer']]:.1f}",
                f"{t['auto_vs_best_peer']:.2f}x",
                f"{t['auto_acceptance']:.2f}",
                f"{t['copied_from_document']:.0%}",
                f"{t['repeats_itself']:.0%}",
                t["auto_text_same_as_off"],
            ]
        )
    caption = (
        f"{Path(report['model']).name}, {report['threads']} thread(s), --ctx {report['ctx']}, non-streamed, "
        f"temperature 0; decoding tokens/s by the servers' own timings, median of {report['rounds']} rounds; "
        "ratios: median of same-round ratios"
    )
    headers = ["task", "kind", "tokens", "off tok/s", "Auto tok/s", "Auto / off", "best llama-server tok/s"]
    headers += ["Auto / best llama-server", "Auto's acceptance", "quoted from the document", "repeats itself"]
    headers += ["Auto's text = off's"]
    verdict = []
    for category, c in report["categories"].items():
        met = "met" if c["target_met"] else "**not met**"
        verdict.append(
            f"- {category}: Auto / off {c['auto_vs_off_median_of_tasks']:.2f}x (median of tasks; pooled "
            f"{c['auto_vs_off_pooled']:.2f}x), target >= {c['target']}x: {met}; Auto / best llama-server "
            f"{c['auto_vs_best_peer_median_of_tasks']:.2f}x"
        )
    return markdown_table(caption, headers, rows) + "\n\n" + "\n".join(verdict)
