"""The command line's shared pieces: a parser whose errors are one line, argparse types from the
engine's declared parameters, and the option groups that ``specchat`` and the lab benches
(``python -m lab``) both take: which models to load, and what a bench runs."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from desktop_app.engine.api import (
    DRAFT_K,
    MAX_TOKENS,
    N_CTX,
    N_THREADS,
    NGPU_LAYERS,
    PROMPT_CACHE_MB,
    DrafterKind,
    LayerSplit,
    NumberRange,
    parse_workers,
)

EXIT_ERROR = 1
QUIET_WAIT = NumberRange(
    "quiet_wait",
    float,
    0.0,
    24 * 3600.0,
    60.0,
    "bench: the most seconds it waits for an idle machine before a round (desktop_app/bench/quiet.py)",
)
BENCH_REPEATS = NumberRange("repeats", int, 1, 1000, 1, "bench: rounds of each measurement")
AUTO_ALL = "auto"  # the bench's --drafter auto (args.auto_all): Auto chooses among every drafter, every cycle


class Parser(argparse.ArgumentParser):
    """Bad arguments give one line (what is wrong, where to look) and exit 1, like every other error."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def checked(number: NumberRange[int] | NumberRange[float]) -> Callable[[str], int | float]:
    """An argparse ``type`` that parses and range-checks one declared parameter."""
    convert = parsed(number.parse)
    convert.__name__ = number.name
    return convert


def parsed(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse ``type`` from one of the engine's parsers (its ValueError is the message)."""

    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = getattr(parse, "__name__", "value")
    return convert


def add_model_args(p: argparse.ArgumentParser, vision: bool = False) -> None:
    """The model options; ``vision``: with ``--mmproj`` (the commands that take images)."""
    p.add_argument("--target", type=Path, help="target GGUF (default: the embedded SmolLM2-135M)")
    p.add_argument("--draft", type=Path, help="draft GGUF sharing the target's vocabulary")
    p.add_argument(
        "--drafter",
        choices=[k.value for k in DrafterKind],
        help="; ".join(f"{k.value}: {k.label}" for k in DrafterKind) + " (default: the best available)",
    )
    p.add_argument(
        "--n-gpu-layers",
        type=checked(NGPU_LAYERS),
        default=NGPU_LAYERS.default,
        help="target layers on the GPU (-1 all, 0 none)",
    )
    p.add_argument(
        "--draft-n-gpu-layers", type=checked(NGPU_LAYERS), default=NGPU_LAYERS.default, help="draft layers on the GPU"
    )
    p.add_argument("--ctx", type=checked(N_CTX), default=N_CTX.default, help=N_CTX.description)
    if vision:
        p.add_argument(
            "--mmproj", type=Path, help="the target's vision projector GGUF (default: one beside it that fits)"
        )
    p.add_argument(
        "--prompt-cache-mb",
        type=checked(PROMPT_CACHE_MB),
        default=PROMPT_CACHE_MB.default,
        metavar="MIB",
        help=PROMPT_CACHE_MB.description + f" (default: {PROMPT_CACHE_MB.default})",
    )
    p.add_argument(
        "--threads",
        type=checked(N_THREADS),
        default=None,
        help="CPU threads, fixed (default: the fastest count, measured as the machine's load changes)",
    )
    p.add_argument(
        "--workers",
        type=parsed(parse_workers),
        default=(),
        help="spread the target over these computers running `specchat worker` (host:port,...); the draft stays here",
    )
    p.add_argument(
        "--split",
        type=parsed(LayerSplit.parse),
        default=LayerSplit(),
        help="share of the target's layers per computer, this one first, then each worker (e.g. 1,2,2; default: equal)",
    )


def add_bench_args(p: argparse.ArgumentParser) -> None:
    """The models, prompts, modes and rounds of a bench; ``bench_drafter`` reads the drafter after parsing."""
    add_model_args(p)
    drafter_arg = next(a for a in p._actions if a.dest == "drafter")
    drafter_arg.choices = [*(drafter_arg.choices or []), AUTO_ALL]
    drafter_arg.help = (
        drafter_arg.help or ""
    ) + "; auto (the default here): Auto chooses among all of them every cycle, and the fixed modes try each"
    drafter_arg.default = AUTO_ALL
    p.add_argument("--prompts", type=Path, help="prompt set JSON (default: resources/bench)")
    p.add_argument(
        "--draft-max",
        type=checked(DRAFT_K),
        nargs="+",
        default=[2, 4, 8],
        help="fixed k values to compare (auto drafts up to the largest)",
    )
    p.add_argument("--max-tokens", type=checked(MAX_TOKENS), default=128)
    p.add_argument(
        "--repeats", type=checked(BENCH_REPEATS), default=BENCH_REPEATS.default, help=BENCH_REPEATS.description
    )
    p.add_argument("--categories", nargs="*", help="only these categories")
    p.add_argument("--out", type=Path, default=Path("bench-out"))
    p.add_argument(
        "--quiet-wait",
        type=checked(QUIET_WAIT),
        default=QUIET_WAIT.default,
        metavar="SECONDS",
        help="wait at most this long before each round (each prompt's modes, each pair) "
        "for other programs to leave the CPUs idle",
    )


def bench_drafter(args: argparse.Namespace) -> None:
    """``--drafter auto`` becomes ``args.auto_all`` (Auto among every drafter) and no fixed drafter."""
    args.auto_all = args.drafter == AUTO_ALL
    if args.auto_all:
        args.drafter = None
