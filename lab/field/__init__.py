"""``python -m lab field SCENARIO ...``: SpecChat where users meet it (issue 45).

Scenarios, each runnable alone, each writing ``SCENARIO.json`` and ``SCENARIO.md`` to ``--out``:

- ``first-answer``: one-shot ``specchat generate``, off vs Auto, a new home per answer and a
  known machine, under each ``--loads`` (default idle, busy): wall time and ``ttft_s``;
- ``busy``: Auto vs off decoding speed through the CLI on the bench's chat, code and rewrite
  prompts under a busy loop and another llama process (default ``--loads busy,llama``);
- ``window-busy``: Auto vs off in the real window on the same prompts under the same loads
  (default ``--loads busy,llama``), and how often the footer said "slower than plain";
- ``window-vs-cli``: a long answer (``--answer-tokens``, 2,000) in the real window vs the CLI
  (lab/window.py);
- ``interleaved``: two conversations about long documents asked A, B, A, B, A through the API,
  SpecChat vs llama-server (``--peer DIR``), at each ``--doc-tokens``;
- ``prompt-read``: cold prompt reading at each ``--read-tokens``, SpecChat vs llama-server;
- ``documents``: questions over real documents (quotes, extraction, rewrites; summaries, short
  answers) through the API, Auto vs off vs llama-server plain and n-gram (issue 50);
  ``document-copies``: the same with requests to repeat a document, which the built-in model does.

Every comparison is paired: both sides in the same round, the first alternating, figures given as
medians over ``--rounds`` of same-round ratios, each round after the machine went quiet.
"""

from __future__ import annotations

import argparse
import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop_app.cli_args import checked, parsed
from desktop_app.engine.api import MAX_TOKENS
from lab.field.loads import parse_loads
from lab.report import write_report

WINDOW_PROMPT = "Write a long poem about the sea and the wind."  # greedy, it runs to any length
DEFAULT_LOADS = {"first-answer": ["idle", "busy"], "busy": ["busy", "llama"], "window-busy": ["busy", "llama"]}
DEFAULT_ROUNDS = 5
WINDOW_VS_CLI = 0.95  # issue 45's done-when: window decoding over the CLI's on a 2,000-token answer


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"token counts are comma-separated whole numbers, not {text!r}") from None
    if not sizes or min(sizes) < 64:
        raise ValueError(f"token counts must be at least 64: {text!r}")
    return sizes


def add_field_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenarios", nargs="+", choices=[*SCENARIOS, "all"], metavar="SCENARIO", help=", ".join(SCENARIOS))
    p.add_argument(
        "--rounds",
        dest="repeats",
        type=int,
        metavar="N",
        help=f"paired rounds of each measurement (default {DEFAULT_ROUNDS})",
    )
    p.set_defaults(repeats=DEFAULT_ROUNDS)
    p.add_argument(
        "--loads",
        type=parsed(parse_loads),
        help="background loads, comma-separated: idle, busy (a busy loop), llama (another llama process); "
        "default: idle,busy for first-answer, busy,llama for busy",
    )
    p.add_argument(
        "--peer", type=Path, metavar="DIR", help="llama.cpp's built tools (llama-server), for the API scenarios"
    )
    p.add_argument(
        "--doc-tokens", type=parsed(_sizes), default=[2500, 6000], help="interleaved: document sizes (2500,6000)"
    )
    p.add_argument(
        "--read-tokens",
        type=parsed(_sizes),
        default=[2500, 6000, 26000],
        help="prompt-read: prompt sizes (2500,6000,26000)",
    )
    p.add_argument(
        "--answer-tokens", type=checked(MAX_TOKENS), default=2000, help="window-vs-cli: the answer's length (2000)"
    )


def _with_loads(args: argparse.Namespace, scenario: str) -> argparse.Namespace:
    scoped = copy.copy(args)
    scoped.loads = args.loads or DEFAULT_LOADS[scenario]
    return scoped


def _first_answer(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from lab.field.cli_runs import first_answer, first_answer_table

    report = first_answer(_with_loads(args, "first-answer"))
    return report, first_answer_table(report)


def _busy(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from desktop_app.bench.runner import load_prompts, single_prompts
    from lab.field.cli_runs import busy, busy_table
    from lab.peer_api import NEW_CATEGORIES

    prompts = load_prompts(args.prompts)
    chosen = args.categories or list(NEW_CATEGORIES)
    report = busy(_with_loads(args, "busy"), {c: single_prompts(prompts[c]) for c in chosen})
    return report, busy_table(report)


def _window_busy(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from desktop_app.bench.runner import load_prompts, single_prompts
    from lab.field.window_busy import window_busy, window_busy_table
    from lab.peer_api import NEW_CATEGORIES

    prompts = load_prompts(args.prompts)
    chosen = args.categories or list(NEW_CATEGORIES)
    home = os.environ.get("SPECCHAT_HOME")
    try:
        report = window_busy(_with_loads(args, "window-busy"), {c: single_prompts(prompts[c]) for c in chosen})
    finally:
        if home is None:
            os.environ.pop("SPECCHAT_HOME", None)
        else:
            os.environ["SPECCHAT_HOME"] = home
    return report, window_busy_table(report)


def _window_vs_cli(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from lab.window import markdown, measure

    scoped = copy.copy(args)
    scoped.max_tokens = args.answer_tokens
    scoped.ctx = max(args.ctx, args.answer_tokens + 256)
    home = os.environ.get("SPECCHAT_HOME")
    try:
        report = measure(scoped, WINDOW_PROMPT, args.repeats)  # it points SPECCHAT_HOME at a temporary home
    finally:
        if home is None:
            os.environ.pop("SPECCHAT_HOME", None)
        else:
            os.environ["SPECCHAT_HOME"] = home
    report["target"] = WINDOW_VS_CLI  # issue 45's, above lab/window.py's (issue 13)
    report["target_met"] = report["window_vs_cli"] >= WINDOW_VS_CLI
    return report, markdown(report)


def _peer_args(args: argparse.Namespace) -> argparse.Namespace:
    from desktop_app.engine import default_model_path

    if args.peer is None or not (args.peer / "llama-server").exists():
        raise ValueError("the API scenarios need --peer DIR holding llama-server (shared/tools/build-llama-peer.sh)")
    scoped = copy.copy(args)
    scoped.model = args.target or default_model_path()
    scoped.threads = args.threads or os.cpu_count() or 2
    return scoped


def _interleaved(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from lab.field.api_runs import interleaved, interleaved_table
    from lab.peer_api import token_counter

    scoped = _peer_args(args)
    report = interleaved(scoped, token_counter(Path(scoped.model)))
    return report, interleaved_table(report)


def _prompt_read(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from desktop_app.library.local import describe
    from lab.field.prompt_read import prompt_read, prompt_read_table
    from lab.peer_api import token_counter

    scoped = _peer_args(args)
    report = prompt_read(scoped, token_counter(Path(scoped.model)), describe(scoped.model).context_length)
    return report, prompt_read_table(report)


def _documents(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from lab.field.documents_bench import documents_bench, documents_table

    report = documents_bench(_peer_args(args))
    return report, documents_table(report)


def _document_copies(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from lab.field.document_tasks import COPY_TASKS
    from lab.field.documents_bench import documents_bench, documents_table

    report = documents_bench(_peer_args(args), COPY_TASKS)
    return report, documents_table(report)


SCENARIOS: dict[str, Callable[[argparse.Namespace], tuple[dict[str, Any], str]]] = {
    "first-answer": _first_answer,
    "busy": _busy,
    "interleaved": _interleaved,
    "prompt-read": _prompt_read,
    "documents": _documents,
    "document-copies": _document_copies,
    "window-busy": _window_busy,  # the window scenarios last: they start Qt in this process
    "window-vs-cli": _window_vs_cli,
}


def chosen(names: list[str]) -> list[str]:
    """The scenarios to run, in the registry's order (``all``: every one)."""
    return list(SCENARIOS) if "all" in names else [n for n in SCENARIOS if n in names]


def run(args: argparse.Namespace) -> int:
    for name in chosen(args.scenarios):
        report, table = SCENARIOS[name](args)
        write_report(args.out, name, report, f"## {name}\n\n{table}")
    return 0
