"""``python -m lab <bench> [options]``: one subcommand per lab benchmark, each with the bench
options of ``specchat bench`` (models, prompts, k values, rounds, output folder) and its own.
Errors print one line on stderr and exit 1, as ``specchat`` does."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from desktop_app.cli import CliError, load_engine, warn_if_foreign_build
from desktop_app.cli_args import EXIT_ERROR, Parser, add_bench_args, bench_drafter, parsed

WINDOW_PROMPT = "Write a long poem about the sea and the wind."  # the window bench: a long answer


def cost_table(text: str) -> list[float]:
    """``MS,MS,...``: milliseconds per target pass of 1, 2, ... rows."""
    try:
        ms = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(
            f"a cost table is comma-separated milliseconds per pass of 1, 2, ... rows, not {text!r}"
        ) from None
    if not ms or not all(m > 0 for m in ms):
        raise ValueError(f"pass costs must be positive milliseconds: {text!r}")
    return ms


def tunable(text: str) -> tuple[str, float]:
    """``NAME=VALUE``: an :class:`AutoTunables` field and the number to replay it with."""
    from desktop_app.engine.auto.tunables import AutoTunables

    name, _, value = text.partition("=")
    if name not in AutoTunables.__dataclass_fields__:
        raise ValueError(f"no Auto tunable {name!r}; known: {', '.join(AutoTunables.__dataclass_fields__)}")
    try:
        return name, float(value)
    except ValueError:
        raise ValueError(f"{name} needs a number, not {value!r}") from None


def _first_prompt(prompts: Path | None, category: str) -> str:
    """The first single-message prompt of a category of the prompt set."""
    from desktop_app.bench.runner import load_prompts, single_prompts

    return single_prompts(load_prompts(prompts)[category])[0]


def _write_json(args: argparse.Namespace, name: str, report: dict[str, Any], shown: dict[str, Any]) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{name}.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(json.dumps(shown, indent=2))


def run_replay(args: argparse.Namespace) -> int:
    from lab.replay import run

    run(load_engine(args), args)
    return 0


def run_repeat(args: argparse.Namespace) -> int:
    from lab.repeat import run

    run(load_engine(args), args, args.replay[0])
    return 0


def run_attention(args: argparse.Namespace) -> int:
    from lab.attention import run

    return run(args)


def run_unused_draft(args: argparse.Namespace) -> int:
    from lab.unused_draft import run

    return run(args, _first_prompt(args.prompts, (args.categories or ["chat"])[0]))


def run_peer(args: argparse.Namespace) -> int:
    from lab.peer import measure

    report = measure(args, _first_prompt(args.prompts, "rewrite"))
    _write_json(args, "peer", report, {k: v for k, v in report.items() if k != "runs"})
    return 0


def run_peer_api(args: argparse.Namespace) -> int:
    from desktop_app.bench.runner import load_prompts, single_prompts
    from lab.peer_api import measure

    prompts = {c: single_prompts(v) for c, v in load_prompts(args.prompts).items()}
    report = measure(args, prompts)
    _write_json(args, "peer-api", report, {k: v for k, v in report.items() if k != "runs"})
    return 0


def run_copies(args: argparse.Namespace) -> int:
    from lab.copies import measure, summary

    report = measure(args)
    _write_json(args, "copies", report, summary(report))
    return 0


def run_overhead(args: argparse.Namespace) -> int:
    from desktop_app.bench.runner import chosen_prompts
    from lab.overhead import cmd_overhead

    prompts = chosen_prompts(args)
    report = cmd_overhead(
        load_engine(args), {c: [p for p in v if isinstance(p, str)] for c, v in prompts.items()}, args
    )
    _write_json(args, "overhead", report, report)
    return 0


def run_api_overhead(args: argparse.Namespace) -> int:
    from lab.api_overhead import measure

    report = measure(load_engine(args), rounds=max(args.repeats, 5), max_tokens=args.max_tokens)
    _write_json(args, "api-overhead", report, report)
    return 0


def run_load(args: argparse.Namespace) -> int:
    from lab.load import run

    return run(args, _first_prompt(args.prompts, (args.categories or ["rewrite"])[0]))


def run_remote(args: argparse.Namespace) -> int:
    from desktop_app.bench.runner import load_prompts, single_prompts
    from desktop_app.engine import Engine
    from lab.remote import measure

    prompts = load_prompts(args.prompts)
    measure(args, [p for c in args.categories or ["rewrite"] for p in single_prompts(prompts[c])], args.out, Engine)
    return 0


def run_field(args: argparse.Namespace) -> int:
    from lab.field import run

    return run(args)


def run_window(args: argparse.Namespace) -> int:
    from lab.window import run  # it drives the real window

    return run(args, WINDOW_PROMPT)


BENCHES: dict[str, tuple[str, Callable[[argparse.Namespace], int]]] = {
    "replay": (
        "the drafter bench replayed at cost tables (ms per target pass of 1, 2, ... rows): every mode "
        "drafts as in the bench, each pass timed by the table, no noise",
        run_replay,
    ),
    "repeat": (
        "the same code-edit request again and again, off and Auto, replayed at a cost table: target "
        "passes, tokens per pass and the longest draft of each round",
        run_repeat,
    ),
    "attention": (
        "flash attention off (SpecChat's choice on the CPU) vs on: a shallow and a deep prompt, "
        "speculation off and Auto, interleaved",
        run_attention,
    ),
    "unused-draft": (
        "target passes with a draft loaded that Auto does not use vs without it, and Auto vs off",
        run_unused_draft,
    ),
    "peer": (
        "our prompt lookup against llama.cpp's llama-speculative-simple ngram-simple in DIR "
        "(built by shared/tools/build-llama-peer.sh), on the first rewrite prompt",
        run_peer,
    ),
    "peer-api": (
        "SpecChat's API (off, auto) against llama-server in DIR (plain, ngram-simple, ngram-mod), "
        "streamed through HTTP: new prompts, repeated requests and a replayed agent loop",
        run_peer_api,
    ),
    "copies": (
        "long copies on held-out prompts (code edits, rewrites, extractions): SpecChat's API (off, auto) "
        "against llama-server in DIR (plain, ngram-simple, ngram-mod), each request new and sent again",
        run_copies,
    ),
    "overhead": ("the loop's own overhead (vs llama-cpp-python, vs the speed-up formula)", run_overhead),
    "api-overhead": ("streamed tokens/s over the local API against the same engine in-process", run_api_overhead),
    "load": (
        "speed idle and with 1 and 2 busy background processes: the adaptive thread count vs each fixed "
        "count, plain decoding and Auto",
        run_load,
    ),
    "remote": (
        "the target over two local workers behind 0, 2 and 10 ms of added network delay: off vs auto "
        "(the rewrite prompts)",
        run_remote,
    ),
    "window": (
        "the real window vs `specchat generate`: streaming tokens/s of the same answer, interleaved",
        run_window,
    ),
    "field": (
        "SpecChat where users meet it (issue 45): the first answer on a new and a known machine, Auto on a busy "
        "machine, the window vs the CLI, long interleaved conversations and cold prompt reading vs llama-server",
        run_field,
    ),
}


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m lab", description="SpecChat's lab benchmarks (a source checkout's, not the app's).")
    sub = parser.add_subparsers(dest="bench", required=True, parser_class=Parser, metavar="BENCH")
    for name, (text, _) in BENCHES.items():
        bench = sub.add_parser(name, help=text, description=text)
        add_bench_args(bench)
        if name in ("replay", "repeat"):
            bench.add_argument(
                "replay",
                type=parsed(cost_table),
                nargs="+",
                metavar="MS,MS,...",
                help="a cost table: ms per target pass of 1, 2, ... rows (one or more tables)",
            )
        if name == "replay":
            bench.add_argument(
                "--tune",
                type=parsed(tunable),
                action="append",
                default=[],
                metavar="NAME=VALUE",
                help="replay Auto with this AutoTunables field changed (repeatable)",
            )
        if name == "field":
            from lab.field import add_field_args

            add_field_args(bench)
        if name == "copies":
            from lab.copies import add_copies_args

            add_copies_args(bench)
        if name in ("peer", "peer-api"):
            bench.add_argument("peer", type=Path, metavar="DIR", help="the folder of llama.cpp's built tools")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    bench_drafter(args)
    from desktop_app.engine.errors import EngineError

    try:
        warn_if_foreign_build()
        return BENCHES[args.bench][1](args)
    except (CliError, EngineError, ValueError, OSError) as exc:
        print(f"lab: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("lab: interrupted", file=sys.stderr)
        return 130
