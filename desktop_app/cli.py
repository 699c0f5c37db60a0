"""``specchat``: the GUI by default; ``generate``, ``bench`` and ``models`` subcommands for people
and checks. Errors print one line on stderr and exit non-zero, never a traceback."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from desktop_app.engine.api import (
    API_HOST,
    API_PORT,
    DEFAULT_SPEC_MODE,
    DRAFT_K,
    MAX_TOKENS,
    MIN_P,
    N_CTX,
    N_THREADS,
    NGPU_LAYERS,
    SEED,
    TEMPERATURE,
    TOP_K,
    TOP_P,
    WORKER_HOST,
    WORKER_PORT,
    DrafterKind,
    LayerSplit,
    NumberRange,
    SpecMode,
    parse_workers,
)

EXIT_ERROR = 1
QUIET_WAIT = NumberRange("quiet_wait", float, 0.0, 24 * 3600.0, 60.0,
                         "bench: the most seconds it waits for an idle machine before a round (desktop_app/bench/quiet.py)")
BENCH_REPEATS = NumberRange("repeats", int, 1, 1000, 1, "bench: rounds of each measurement")
WINDOW_PROMPT = "Write a long poem about the sea and the wind."  # bench --window: a long answer


class CliError(Exception):
    """A message for the user; main() prints it and exits 1."""


class _Parser(argparse.ArgumentParser):
    """Bad arguments give one line (what is wrong, where to look) and exit 1, like every other error."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _checked(number: NumberRange[int] | NumberRange[float]) -> Callable[[str], int | float]:
    """An argparse ``type`` that parses and range-checks one declared parameter."""
    convert = _parsed(number.parse)
    convert.__name__ = number.name
    return convert


def _parsed(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse ``type`` from one of the engine's parsers (its ValueError is the message)."""

    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = getattr(parse, "__name__", "value")
    return convert


def _cost_table(text: str) -> list[float]:
    """``--replay 10.8,14.9,...``: milliseconds per target pass of 1, 2, ... rows."""
    try:
        ms = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"a cost table is comma-separated milliseconds per pass of 1, 2, ... rows, not {text!r}") from None
    if not ms or not all(m > 0 for m in ms):
        raise ValueError(f"pass costs must be positive milliseconds: {text!r}")
    return ms


def _add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", type=Path, help="target GGUF (default: the embedded SmolLM2-135M)")
    p.add_argument("--draft", type=Path, help="draft GGUF sharing the target's vocabulary")
    p.add_argument("--drafter", choices=[k.value for k in DrafterKind],
                   help="; ".join(f"{k.value}: {k.label}" for k in DrafterKind) + " (default: the best available)")
    p.add_argument("--n-gpu-layers", type=_checked(NGPU_LAYERS), default=NGPU_LAYERS.default,
                   help="target layers on the GPU (-1 all, 0 none)")
    p.add_argument("--draft-n-gpu-layers", type=_checked(NGPU_LAYERS), default=NGPU_LAYERS.default,
                   help="draft layers on the GPU")
    p.add_argument("--ctx", type=_checked(N_CTX), default=N_CTX.default, help=N_CTX.description)
    p.add_argument("--threads", type=_checked(N_THREADS), default=None, help="CPU threads, fixed (default: the fastest count, measured as the machine's load changes)")
    p.add_argument("--workers", type=_parsed(parse_workers), default=(),
                   help="spread the target over these computers running `specchat worker` (host:port,...); "
                        "the draft stays here")
    p.add_argument("--split", type=_parsed(LayerSplit.parse), default=LayerSplit(),
                   help="share of the target's layers per computer, this one first, then each worker "
                        "(e.g. 1,2,2; default: equal)")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="specchat", description="Chat with local LLMs, fast.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--self-test", action="store_true", help="check the install and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    gen = sub.add_parser("generate", help="generate one answer and print it (or JSON)")
    _add_model_args(gen)
    gen.add_argument("--spec", choices=[m.value for m in SpecMode], default=DEFAULT_SPEC_MODE.value,
                     help="; ".join(f"{m.value}: {m.description}" for m in SpecMode))
    gen.add_argument("--draft-max", type=_checked(DRAFT_K), default=DRAFT_K.default, help=DRAFT_K.description)
    src = gen.add_mutually_exclusive_group(required=True)
    src.add_argument("--prompt", help="one user message (chat template applied unless --raw)")
    src.add_argument("--messages", type=Path, help="JSON file with a list of {role, content}")
    gen.add_argument("--raw", action="store_true",
                     help="use --prompt as is, without the chat template; special-token texts such as "
                          "<|im_start|> become those tokens, as in llama.cpp's tools")
    gen.add_argument("--literal", action="store_true",
                     help="with --raw: tokenize special-token texts as plain text")
    gen.add_argument("--max-tokens", type=_checked(MAX_TOKENS), default=MAX_TOKENS.default,
                     help=MAX_TOKENS.description)
    gen.add_argument("--temperature", type=_checked(TEMPERATURE), default=TEMPERATURE.default,
                     help=TEMPERATURE.description)
    gen.add_argument("--top-k", type=_checked(TOP_K), default=TOP_K.default, help=TOP_K.description)
    gen.add_argument("--top-p", type=_checked(TOP_P), default=TOP_P.default, help=TOP_P.description)
    gen.add_argument("--min-p", type=_checked(MIN_P), default=MIN_P.default, help=MIN_P.description)
    gen.add_argument("--seed", type=_checked(SEED), default=None, help=SEED.description)
    gen.add_argument("--stop", action="append", default=[], help="stop string (repeatable)")
    gen.add_argument("--json", action="store_true", help="print one JSON object")

    bench = sub.add_parser("bench", help="benchmark speculation on this machine")
    _add_model_args(bench)
    drafter_arg = next(a for a in bench._actions if a.dest == "drafter")
    drafter_arg.choices = [*(drafter_arg.choices or []), "auto"]  # bench.runner.AUTO_ALL
    drafter_arg.help = (drafter_arg.help or "") + "; auto (the default here): Auto chooses among all of them every cycle, " \
                                                  "and the fixed modes try each"
    drafter_arg.default = "auto"
    bench.add_argument("--prompts", type=Path, help="prompt set JSON (default: resources/bench)")
    bench.add_argument("--draft-max", type=_checked(DRAFT_K), nargs="+", default=[2, 4, 8],
                       help="fixed k values to compare (auto drafts up to the largest)")
    bench.add_argument("--max-tokens", type=_checked(MAX_TOKENS), default=128)
    bench.add_argument("--repeats", type=_checked(BENCH_REPEATS), default=BENCH_REPEATS.default,
                       help=BENCH_REPEATS.description)
    bench.add_argument("--categories", nargs="*", help="only these categories")
    bench.add_argument("--out", type=Path, default=Path("bench-out"))
    bench.add_argument("--overhead", action="store_true",
                       help="measure the loop's own overhead (vs llama-cpp-python, vs the speed-up formula)")
    bench.add_argument("--quiet-wait", type=_checked(QUIET_WAIT), default=QUIET_WAIT.default, metavar="SECONDS",
                       help="wait at most this long before each round (each prompt's modes, each pair) "
                            "for other programs to leave the CPUs idle")
    bench.add_argument("--load", action="store_true",
                       help="speed idle and with 1 and 2 busy background processes: the adaptive thread count vs "
                            "each fixed count, plain decoding and Auto")
    bench.add_argument("--window", action="store_true",
                       help="the real window vs `specchat generate`: streaming tokens/s of the same answer, interleaved")
    bench.add_argument("--attention", action="store_true",
                       help="flash attention off (SpecChat's choice on the CPU) vs on: a shallow and a deep prompt, "
                            "speculation off and Auto, interleaved")
    bench.add_argument("--unused-draft", action="store_true",
                       help="target passes with a draft loaded that Auto does not use vs without it, and Auto vs off")
    bench.add_argument("--remote", action="store_true",
                       help="the target over two local workers behind 0, 2 and 10 ms of added network delay: "
                            "off vs auto (the rewrite prompts)")
    bench.add_argument("--peer", metavar="DIR",
                       help="our prompt lookup against llama.cpp's llama-speculative-simple ngram-simple in DIR "
                            "(built by shared/tools/build-llama-peer.sh), on the first rewrite prompt")
    bench.add_argument("--replay", type=_parsed(_cost_table), action="append", metavar="MS,MS,...",
                       help="replay the drafter bench at this cost table (ms per target pass of 1, 2, ... rows; "
                            "repeatable): every mode drafts as in the bench, each pass timed by the table, no noise")
    bench.add_argument("--api-overhead", action="store_true",
                       help="measure streamed tokens/s over the local API against the same engine in-process")

    serve = sub.add_parser("serve", help="serve the model on localhost with the OpenAI API")
    _add_model_args(serve)
    serve.add_argument("--host", default=API_HOST, help="address to listen on (default: this machine only)")
    serve.add_argument("--port", type=_checked(API_PORT), default=API_PORT.default, help=API_PORT.description)
    # Where the key comes from is decided in one place: desktop_app/server/api_key.py.
    keys = serve.add_mutually_exclusive_group()
    keys.add_argument("--api-key-file", type=Path, metavar="PATH",
                      help="require 'Authorization: Bearer KEY' on every request, KEY being the one line in PATH. "
                           "The key comes from --api-key-file or --api-key (one of them), else from the "
                           "SPECCHAT_API_KEY environment variable; none of the three: no key")
    keys.add_argument("--api-key", default=None, metavar="KEY",
                      help="the same with KEY on the command line, where other users of this computer can read "
                           "it (ps, /proc); prefer --api-key-file or SPECCHAT_API_KEY")
    serve.add_argument("--spec", choices=[m.value for m in SpecMode], default=DEFAULT_SPEC_MODE.value,
                       help="the default speculation mode (a request's 'speculation' field overrides it)")

    worker = sub.add_parser("worker", help="lend this computer to another SpecChat over the network (llama.cpp RPC)")
    worker.add_argument("--host", default=WORKER_HOST,
                        help="address to listen on (default: this computer only; give its LAN address to serve others)")
    worker.add_argument("--port", type=_checked(WORKER_PORT), default=WORKER_PORT.default, help=WORKER_PORT.description)
    worker.add_argument("--threads", type=_checked(N_THREADS), default=0, help="CPU threads (0: every core)")

    models = sub.add_parser("models", help="list, download and pair GGUF models")
    msub = models.add_subparsers(dest="models_command", required=True, parser_class=_Parser)
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
        workers=() if draft else args.workers,
        split=args.split,
    )


def load_engine(args: argparse.Namespace) -> Any:
    """An Engine with the requested target (default model if none) and draft."""
    from desktop_app.engine import Engine, default_model_path

    engine = Engine()
    if args.workers:
        from desktop_app.engine.llama import rpc

        rpc.on_fatal(lambda reason: print(f"\nspecchat: error: {reason}; the answer above is incomplete",
                                          file=sys.stderr, flush=True), lambda: args.workers)
    info = engine.load_target(args.target or default_model_path(), _model_options(args))
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
        raise CliError(f"--drafter {args.drafter} is not available here; this pair supports: "
                       f"{engine.drafting_note(engine.drafters_available())}")
    if refusal and getattr(args, "spec", SpecMode.OFF.value) != SpecMode.OFF.value:
        print(f"specchat: note: {refusal}", file=sys.stderr)  # it still answers, without speculation
    return engine


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
    from desktop_app.engine.api import GenerateRequest, Message, SamplingParams, TextChunk, final_result

    try:
        sampling = SamplingParams(args.temperature, args.top_k, args.top_p, args.min_p, args.seed)
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
            messages=messages, prompt=prompt, max_tokens=args.max_tokens, sampling=sampling,
            spec=args.spec, draft_max=args.draft_max, drafter=args.drafter, stop=args.stop,
            parse_special=not args.literal,
        )
    except ValueError as exc:
        raise CliError(str(exc)) from None
    engine = load_engine(args)

    def show(chunk: TextChunk) -> None:
        sys.stdout.write(chunk.text)
        sys.stdout.flush()

    result = final_result(engine.generate(request), None if args.json else show)
    if args.json:
        print(json.dumps({"text": result.text, "token_ids": result.token_ids, "stats": result.stats.to_dict()}, ensure_ascii=False))
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
        from desktop_app.bench.runner import AUTO_ALL

        args.auto_all = args.drafter == AUTO_ALL
        if args.auto_all:
            args.drafter = None
        if args.api_overhead:
            from desktop_app.server.overhead import measure

            report = measure(load_engine(args), rounds=max(args.repeats, 5), max_tokens=args.max_tokens)
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "api-overhead.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
            print(json.dumps(report, indent=2))
            return 0
        if args.replay:
            from desktop_app.bench.replay import run as run_replay

            run_replay(load_engine(args), args)
            return 0
        if args.peer:
            from desktop_app.bench.peer import measure as measure_peer
            from desktop_app.bench.runner import load_prompts, single_prompts

            report = measure_peer(args, single_prompts(load_prompts(args.prompts)["rewrite"])[0])
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "peer.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
            print(json.dumps({k: v for k, v in report.items() if k != "runs"}, indent=2))
            return 0
        if args.window:
            from desktop_app.ui.window_bench import run as run_window  # it drives the real window

            return run_window(args, WINDOW_PROMPT)
        if args.attention:
            from desktop_app.bench.attention import run as run_attention

            return run_attention(args)
        if args.unused_draft:
            from desktop_app.bench.runner import load_prompts, single_prompts
            from desktop_app.bench.unused_draft import run as run_unused

            return run_unused(args, single_prompts(load_prompts(args.prompts)[(args.categories or ["chat"])[0]])[0])
        if args.load:
            from desktop_app.bench.load import run as run_load
            from desktop_app.bench.runner import load_prompts, single_prompts

            return run_load(args, single_prompts(load_prompts(args.prompts)[(args.categories or ["rewrite"])[0]])[0])
        if args.remote:
            from desktop_app.bench.remote import measure as measure_remote
            from desktop_app.bench.runner import load_prompts, single_prompts
            from desktop_app.engine import Engine

            prompts = load_prompts(args.prompts)
            chosen = args.categories or ["rewrite"]
            measure_remote(args, [p for c in chosen for p in single_prompts(prompts[c])], args.out, Engine)
            return 0
        from desktop_app.bench.runner import cmd_bench
        from desktop_app.ui.bench_chart import draw_chart

        return cmd_bench(args, load_engine, draw_chart)
    if args.command == "serve":
        from desktop_app.server.api_key import resolve_api_key
        from desktop_app.server.run import serve

        api_key = resolve_api_key(args.api_key, args.api_key_file)  # before loading: a bad key file fails at once
        return serve(load_engine(args), args.host, args.port, api_key, SpecMode(args.spec), args.api_key_file)
    if args.command == "worker":
        from desktop_app.worker import run_worker

        return run_worker(args.host, args.port, args.threads)
    if args.command == "models":
        from desktop_app.models_cli import cmd_models

        return cmd_models(args)
    try:
        from desktop_app.ui.app import run_app
    except ImportError as exc:  # Qt or one of its system libraries is missing
        raise CliError(f"the window cannot start: {exc}. Qt needs system libraries to show a window; on "
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
