"""``specchat``: the GUI by default; ``generate``, ``bench`` and ``models`` subcommands for people
and checks. Errors print one line on stderr and exit non-zero, never a traceback."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

EXIT_ERROR = 1
EXIT_USAGE = 2


class CliError(Exception):
    """A message for the user; main() prints it and exits 1."""


def _add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", type=Path, help="target GGUF (default: the embedded SmolLM2-135M)")
    p.add_argument("--draft", type=Path, help="draft GGUF sharing the target's vocabulary")
    p.add_argument("--drafter", choices=("model", "ngram"), help="ngram = prompt lookup, no draft model")
    p.add_argument("--n-gpu-layers", type=int, default=-1, help="target layers on the GPU (-1 all, 0 none)")
    p.add_argument("--draft-n-gpu-layers", type=int, default=-1, help="draft layers on the GPU")
    p.add_argument("--ctx", type=int, default=4096, help="context size in tokens")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="specchat", description="Chat with local LLMs, fast.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--self-test", action="store_true", help="check the install and exit")
    sub = parser.add_subparsers(dest="command")

    gen = sub.add_parser("generate", help="generate one answer and print it (or JSON)")
    _add_model_args(gen)
    gen.add_argument("--spec", choices=("off", "on", "auto"), default="on")
    gen.add_argument("--draft-max", type=int, default=4, help="tokens drafted per cycle (k)")
    src = gen.add_mutually_exclusive_group(required=True)
    src.add_argument("--prompt", help="one user message (chat template applied unless --raw)")
    src.add_argument("--messages", type=Path, help="JSON file with a list of {role, content}")
    gen.add_argument("--raw", action="store_true", help="use --prompt as is, without the chat template")
    gen.add_argument("--max-tokens", type=int, default=256)
    gen.add_argument("--temperature", type=float, default=0.0)
    gen.add_argument("--top-k", type=int, default=0)
    gen.add_argument("--top-p", type=float, default=1.0)
    gen.add_argument("--min-p", type=float, default=0.0)
    gen.add_argument("--seed", type=int, default=None)
    gen.add_argument("--stop", action="append", default=[], help="stop string (repeatable)")
    gen.add_argument("--json", action="store_true", help="print one JSON object")

    bench = sub.add_parser("bench", help="benchmark speculation on this machine")
    _add_model_args(bench)
    bench.add_argument("--prompts", type=Path, help="prompt set JSON (default: resources/bench)")
    bench.add_argument("--draft-max", type=int, nargs="+", default=[2, 4, 8], help="fixed k values to compare")
    bench.add_argument("--max-tokens", type=int, default=128)
    bench.add_argument("--repeats", type=int, default=1)
    bench.add_argument("--categories", nargs="*", help="only these categories")
    bench.add_argument("--out", type=Path, default=Path("bench-out"))
    bench.add_argument("--overhead", action="store_true",
                       help="measure the loop's own overhead (vs llama-cpp-python, vs the speed-up formula)")

    models = sub.add_parser("models", help="list, download and pair GGUF models")
    msub = models.add_subparsers(dest="models_command", required=True)
    mlist = msub.add_parser("list", help="local models with their metadata")
    mlist.add_argument("--json", action="store_true")
    pull = msub.add_parser("pull", help="download a GGUF file from Hugging Face (resumes, verifies)")
    pull.add_argument("repo", help="Hugging Face repo id, e.g. bartowski/Qwen2.5-0.5B-Instruct-GGUF")
    pull.add_argument("filename", help="the .gguf file in that repo")
    pull.add_argument("--revision", default="main", help="branch, tag or commit (default: main)")
    pair = msub.add_parser("pair", help="can DRAFT speed up TARGET?")
    pair.add_argument("target", type=Path)
    pair.add_argument("draft", type=Path)
    catalog = msub.add_parser("catalog", help="curated draft/target pairs and how to download them")
    catalog.add_argument("--json", action="store_true")
    return parser


def _model_options(args: argparse.Namespace, draft: bool = False) -> Any:
    from desktop_app.engine import ModelOptions

    return ModelOptions(
        n_gpu_layers=args.draft_n_gpu_layers if draft else args.n_gpu_layers,
        n_ctx=args.ctx,
        n_threads=args.threads,
    )


def load_engine(args: argparse.Namespace) -> Any:
    """An Engine with the requested target (default model if none) and draft."""
    from desktop_app.engine import Engine, default_model_path

    engine = Engine()
    engine.load_target(args.target or default_model_path(), _model_options(args))
    if args.draft:
        engine.load_draft(args.draft, _model_options(args, draft=True))
    elif args.drafter == "model":
        raise CliError("--drafter model needs --draft PATH")
    return engine


def _read_messages(path: Path) -> list[dict[str, str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CliError(f"messages file not found: {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CliError(f"{path} is not valid JSON: {exc}") from None
    if isinstance(data, dict) and "messages" in data:
        data = data["messages"]
    return data  # validated by the engine


def cmd_generate(args: argparse.Namespace) -> int:
    from desktop_app.engine import Finished, GenerateRequest, SamplingParams, TextChunk

    try:
        sampling = SamplingParams(args.temperature, args.top_k, args.top_p, args.min_p, args.seed)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if args.raw and args.prompt is None:
        raise CliError("--raw applies to --prompt")
    messages = None
    prompt = None
    if args.messages:
        messages = _read_messages(args.messages)
    elif args.raw:
        prompt = args.prompt
    else:
        messages = [{"role": "user", "content": args.prompt}]
    try:
        request = GenerateRequest(
            messages=messages, prompt=prompt, max_tokens=args.max_tokens, sampling=sampling,
            spec=args.spec, draft_max=args.draft_max, drafter=args.drafter, stop=args.stop,
        )
    except ValueError as exc:
        raise CliError(str(exc)) from None
    engine = load_engine(args)
    result: Finished | None = None
    for event in engine.generate(request):
        if isinstance(event, TextChunk) and not args.json:
            sys.stdout.write(event.text)
            sys.stdout.flush()
        elif isinstance(event, Finished):
            result = event
    assert result is not None
    if args.json:
        print(json.dumps({"text": result.text, "token_ids": result.token_ids, "stats": result.stats.to_dict()}, ensure_ascii=False))
    else:
        s = result.stats
        print(
            f"\n\n[{s.generated_tokens} tokens, {s.decode_tokens_per_s:.1f} tok/s, ttft {s.ttft_s * 1000:.0f} ms, "
            f"mode {s.mode}, acceptance {s.acceptance_rate:.0%}]",
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

        return cmd_bench(args, load_engine)
    if args.command == "models":
        from desktop_app.models_cli import cmd_models

        return cmd_models(args)
    from desktop_app.ui.app import run_app

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
