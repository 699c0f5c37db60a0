"""``specchat``: the GUI by default; ``generate``, ``bench`` and ``models`` subcommands for people
and checks. Errors print one line on stderr and exit non-zero, never a traceback."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_app.cli_args import EXIT_ERROR, Parser, add_bench_args, add_model_args, bench_drafter, checked
from desktop_app.engine.api import (
    API_HOST,
    API_PORT,
    DEFAULT_SPEC_MODE,
    DRAFT_K,
    MAX_TOKENS,
    MIN_P,
    N_THREADS,
    REPEAT_PENALTY,
    SEED,
    TEMPERATURE,
    TOP_K,
    TOP_P,
    WORKER_HOST,
    WORKER_PORT,
    DrafterKind,
    SpecMode,
)

if TYPE_CHECKING:
    from desktop_app.engine import BackendInfo


class CliError(Exception):
    """A message for the user; main() prints it and exits 1."""


def _build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="specchat", description="Chat with local LLMs, fast.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--self-test", action="store_true", help="check the install and exit")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)

    gen = sub.add_parser("generate", help="generate one answer and print it (or JSON)")
    add_model_args(gen, vision=True)
    gen.add_argument(
        "--spec",
        choices=[m.value for m in SpecMode],
        default=DEFAULT_SPEC_MODE.value,
        help="; ".join(f"{m.value}: {m.description}" for m in SpecMode),
    )
    gen.add_argument("--draft-max", type=checked(DRAFT_K), default=DRAFT_K.default, help=DRAFT_K.description)
    src = gen.add_mutually_exclusive_group(required=True)
    src.add_argument("--prompt", help="one user message (chat template applied unless --raw)")
    src.add_argument("--messages", type=Path, help="JSON file with a list of {role, content}")
    gen.add_argument(
        "--raw",
        action="store_true",
        help="use --prompt as is, without the chat template; special-token texts such as "
        "<|im_start|> become those tokens, as in llama.cpp's tools",
    )
    gen.add_argument("--literal", action="store_true", help="with --raw: tokenize special-token texts as plain text")
    gen.add_argument("--max-tokens", type=checked(MAX_TOKENS), default=MAX_TOKENS.default, help=MAX_TOKENS.description)
    gen.add_argument(
        "--temperature", type=checked(TEMPERATURE), default=TEMPERATURE.default, help=TEMPERATURE.description
    )
    gen.add_argument("--top-k", type=checked(TOP_K), default=TOP_K.default, help=TOP_K.description)
    gen.add_argument("--top-p", type=checked(TOP_P), default=TOP_P.default, help=TOP_P.description)
    gen.add_argument("--min-p", type=checked(MIN_P), default=MIN_P.default, help=MIN_P.description)
    gen.add_argument(
        "--repeat-penalty",
        type=checked(REPEAT_PENALTY),
        default=REPEAT_PENALTY.default,
        help=REPEAT_PENALTY.description,
    )
    gen.add_argument("--seed", type=checked(SEED), default=None, help=SEED.description)
    gen.add_argument("--stop", action="append", default=[], help="stop string (repeatable)")
    gen.add_argument("--json", action="store_true", help="print one JSON object")

    bench = sub.add_parser("bench", help="how fast speculation is on this machine, by task")
    add_bench_args(bench)

    serve = sub.add_parser("serve", help="serve the model on localhost with the OpenAI API")
    add_model_args(serve, vision=True)
    serve.add_argument("--host", default=API_HOST, help="address to listen on (default: this machine only)")
    serve.add_argument("--port", type=checked(API_PORT), default=API_PORT.default, help=API_PORT.description)
    # Where the key comes from is decided in one place: desktop_app/server/api_key.py.
    keys = serve.add_mutually_exclusive_group()
    keys.add_argument(
        "--api-key-file",
        type=Path,
        metavar="PATH",
        help="require 'Authorization: Bearer KEY' on every request, KEY being the one line in PATH. "
        "The key comes from --api-key-file or --api-key (one of them), else from the "
        "SPECCHAT_API_KEY environment variable; none of the three: no key",
    )
    keys.add_argument(
        "--api-key",
        default=None,
        metavar="KEY",
        help="the same with KEY on the command line, where other users of this computer can read "
        "it (ps, /proc); prefer --api-key-file or SPECCHAT_API_KEY",
    )
    serve.add_argument(
        "--spec",
        choices=[m.value for m in SpecMode],
        default=DEFAULT_SPEC_MODE.value,
        help="the default speculation mode (a request's 'speculation' field overrides it)",
    )

    worker = sub.add_parser("worker", help="lend this computer to another SpecChat over the network (llama.cpp RPC)")
    worker.add_argument(
        "--host",
        default=WORKER_HOST,
        help="address to listen on (default: this computer only; give its LAN address to serve others)",
    )
    worker.add_argument("--port", type=checked(WORKER_PORT), default=WORKER_PORT.default, help=WORKER_PORT.description)
    worker.add_argument("--threads", type=checked(N_THREADS), default=0, help="CPU threads (0: every core)")

    models = sub.add_parser("models", help="list, download and pair GGUF models")
    msub = models.add_subparsers(dest="models_command", required=True, parser_class=Parser)
    mlist = msub.add_parser("list", help="local models with their metadata")
    mlist.add_argument("--json", action="store_true")
    pull = msub.add_parser("pull", help="download a GGUF file from Hugging Face (resumes, verifies)")
    pull.add_argument("repo", help="Hugging Face repo id, e.g. bartowski/Qwen2.5-0.5B-Instruct-GGUF")
    pull.add_argument("filename", help="the .gguf file in that repo")
    pull.add_argument("--revision", default="main", help="branch, tag or commit (default: main)")
    pull.add_argument("--save-as", metavar="NAME", help="its name in the models folder (see models catalog)")
    pair = msub.add_parser("pair", help="can DRAFT speed up TARGET?")
    pair.add_argument("target", type=Path)
    pair.add_argument("draft", type=Path)
    catalog = msub.add_parser("catalog", help="curated draft/target pairs and how to download them")
    catalog.add_argument("--json", action="store_true")
    return parser


def build_warning_line(info: BackendInfo) -> str | None:
    """The line said once on stderr when llama.cpp is not SpecChat's build; None for ours."""
    warning = info.build_warning()
    return None if warning is None else f"specchat: warning: {warning}"


def warn_if_foreign_build() -> None:
    from desktop_app.engine import backend_info

    line = build_warning_line(backend_info())
    if line is not None:
        print(line, file=sys.stderr)


def _model_options(args: argparse.Namespace, draft: bool = False) -> Any:
    from desktop_app.engine import ModelOptions

    return ModelOptions(
        n_gpu_layers=args.draft_n_gpu_layers if draft else args.n_gpu_layers,
        n_ctx=args.ctx,
        n_threads=args.threads,
        prompt_cache_mb=args.prompt_cache_mb,
        mmproj=None if draft else getattr(args, "mmproj", None),
        workers=() if draft else args.workers,
        split=args.split,
    )


def context_line(requested: int, info: Any) -> str | None:
    """What to say when the context served is smaller than ``--ctx`` asked (a ModelInfo's
    ``n_ctx``): llama.cpp serves at most what the model was trained for. None when it is not."""
    if info.n_ctx >= requested:
        return None
    if info.n_ctx_train and info.n_ctx >= info.n_ctx_train:
        why = f"the model was trained for {info.n_ctx_train:,}; --ctx {requested} is above that"
    else:
        why = f"less than --ctx {requested} asked for"
    return f"specchat: serving {info.n_ctx:,} tokens of context: {why}"


def load_engine(args: argparse.Namespace) -> Any:
    """An Engine with the requested target (default model if none) and draft."""
    from desktop_app import paths
    from desktop_app.engine import CostMemory, Engine, ThreadMemory, default_model_path

    engine = Engine(ThreadMemory(paths.thread_counts_file), CostMemory(paths.auto_costs_file))
    if args.workers:
        from desktop_app.engine import on_fatal

        on_fatal(
            lambda reason: print(
                f"\nspecchat: error: {reason}; the answer above is incomplete", file=sys.stderr, flush=True
            ),
            lambda: args.workers,
        )
    info = engine.load_target(args.target or default_model_path(), _model_options(args))
    if (line := context_line(args.ctx, info)) is not None:
        print(line, file=sys.stderr)
    if info.placement:
        print(f"specchat: {info.name} spread over {info.placement}", file=sys.stderr)
        for line in info.remote_devices:
            print(f"specchat: device {line}", file=sys.stderr)
    if args.draft:
        engine.load_draft(args.draft, _model_options(args, draft=True))
    elif args.drafter == DrafterKind.MODEL.value:
        raise CliError("--drafter model needs --draft PATH")
    refusal = engine.speculation_refusal()
    if args.drafter and not refusal and DrafterKind(args.drafter) not in engine.drafters_available():
        raise CliError(
            f"--drafter {args.drafter} is not available here; this pair supports: "
            f"{engine.drafting_note(engine.drafters_available())}"
        )
    if refusal and getattr(args, "spec", SpecMode.OFF.value) != SpecMode.OFF.value:
        print(f"specchat: note: {refusal}", file=sys.stderr)  # it still answers, without speculation
    return engine


def start_engine(args: argparse.Namespace) -> Any:
    """The engine's child process with the requested target (default model if none) and draft
    loaded (`specchat serve`: a llama.cpp crash ends that process, not the server)."""
    from desktop_app.engine_process.client import EngineProcess, LoadError
    from desktop_app.engine_process.protocol import AutoPlan, Load

    if args.drafter == DrafterKind.MODEL.value and not args.draft:
        raise CliError("--drafter model needs --draft PATH")
    load = Load(
        target=str(args.target or ""),
        target_options=_model_options(args),
        draft=str(args.draft) if args.draft else None,
        draft_options=_model_options(args, draft=True),
        plan=AutoPlan(measure=args.spec == SpecMode.AUTO.value),
    )
    engine = EngineProcess()
    try:
        models = engine.load_and_wait(load)
    except LoadError as exc:
        engine.shutdown()
        raise CliError(str(exc)) from None
    try:
        _say_loaded(args, models)
    except CliError:
        engine.shutdown()
        raise
    return engine


def _say_loaded(args: argparse.Namespace, models: Any) -> None:
    """What `specchat serve` says once its models are loaded; CliError when the draft asked for cannot be used."""
    info = models.target
    if (line := context_line(args.ctx, info)) is not None:
        print(line, file=sys.stderr)
    if info.placement:
        print(f"specchat: {info.name} spread over {info.placement}", file=sys.stderr)
        for line in info.remote_devices:
            print(f"specchat: device {line}", file=sys.stderr)
    if args.draft and models.draft_error:
        raise CliError(f"the draft model cannot be used: {models.draft_error}")
    refusal = models.speculation_refusal
    if args.drafter and not refusal and DrafterKind(args.drafter) not in models.drafters:
        raise CliError(f"--drafter {args.drafter} is not available here; this pair supports: {models.drafting_note}")
    if refusal and args.spec != SpecMode.OFF.value:
        print(f"specchat: note: {refusal}", file=sys.stderr)  # it still answers, without speculation


def _read_messages(path: Path) -> Any:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CliError(f"messages file not found: {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CliError(f"{path} is not valid JSON: {exc}") from None
    if isinstance(data, dict) and "messages" in data:
        data = data["messages"]
    return data  # any JSON: the engine validates it and says what is wrong


def cmd_generate(args: argparse.Namespace) -> int:
    from desktop_app.engine.api import GenerateRequest, Message, SamplingParams
    from desktop_app.engine.events import TextChunk, final_result

    try:
        sampling = SamplingParams(
            args.temperature, args.top_k, args.top_p, args.min_p, args.seed, repeat_penalty=args.repeat_penalty
        )
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if args.raw and args.prompt is None:
        raise CliError("--raw applies to --prompt")
    if args.literal and not args.raw:
        raise CliError("--literal applies to --raw")
    messages: list[Message] | None = None
    prompt = None
    if args.messages:
        messages = _read_messages(args.messages)
    elif args.raw:
        prompt = args.prompt
    else:
        messages = [Message(role="user", content=args.prompt)]
    try:
        request = GenerateRequest(
            messages=messages,
            prompt=prompt,
            max_tokens=args.max_tokens,
            sampling=sampling,
            spec=args.spec,
            draft_max=args.draft_max,
            drafter=args.drafter,
            stop=args.stop,
            parse_special=not args.literal,
        )
    except ValueError as exc:
        raise CliError(str(exc)) from None
    warn_if_foreign_build()
    engine = load_engine(args)

    def show(chunk: TextChunk) -> None:
        sys.stdout.write(chunk.text)
        sys.stdout.flush()

    result = final_result(engine.generate(request), None if args.json else show)
    if args.json:
        print(
            json.dumps(
                {"text": result.text, "token_ids": result.token_ids, "stats": result.stats.to_dict()},
                ensure_ascii=False,
            )
        )
    else:
        s = result.stats
        print(
            f"\n\n[{s.generated_tokens} tokens, {s.decode_tokens_per_s:.1f} tok/s, ttft {s.ttft_s * 1000:.0f} ms, "
            f"mode {s.mode}, drafter {s.drafter}, acceptance {s.acceptance_rate:.0%}, {s.threads}]",
            file=sys.stderr,
        )
    return 0


def _run_command(args: argparse.Namespace) -> int:
    if args.version:
        from desktop_app import __version__

        print(f"specchat {__version__}")
        return 0
    if args.self_test:
        from desktop_app.self_test import run_self_test

        return run_self_test()
    if args.command == "generate":
        return cmd_generate(args)
    if args.command == "bench":
        from desktop_app.bench.runner import cmd_bench
        from desktop_app.ui.speed.bench_chart import draw_chart

        bench_drafter(args)
        warn_if_foreign_build()
        return cmd_bench(args, load_engine, draw_chart)
    if args.command == "serve":
        from desktop_app.server.api_key import resolve_api_key
        from desktop_app.server.run import serve

        api_key = resolve_api_key(args.api_key, args.api_key_file)  # before loading: a bad key file fails at once
        warn_if_foreign_build()
        return serve(start_engine(args), args.host, args.port, api_key, SpecMode(args.spec), args.api_key_file)
    if args.command == "worker":
        from desktop_app.worker import run_worker

        return run_worker(args.host, args.port, args.threads)
    if args.command == "models":
        from desktop_app.models_cli import cmd_models

        return cmd_models(args)
    try:
        from desktop_app.ui.app import run_app
    except ImportError as exc:  # Qt or one of its system libraries is missing
        raise CliError(
            f"the window cannot start: {exc}. Qt needs system libraries to show a window; on "
            "Debian/Ubuntu run packaging/linux/ensure-qt-libs.sh as root (the command line still works)"
        ) from None
    return run_app()


def main(argv: Sequence[str] | None = None) -> int:
    import multiprocessing

    multiprocessing.freeze_support()  # a frozen bundle's engine process starts through here
    parser = _build_parser()
    args = parser.parse_args(argv)
    from desktop_app.engine.errors import EngineError

    try:
        return _run_command(args)
    except (CliError, EngineError, ValueError, OSError) as exc:
        print(f"specchat: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("specchat: interrupted", file=sys.stderr)
        return 130
