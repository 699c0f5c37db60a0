"""``python -m lab peer-api DIR``: SpecChat's API against llama.cpp's ``llama-server``, as users call them.

Both servers load the same GGUF with the same thread count and are driven by the same client
over HTTP (``/v1/chat/completions``, streamed, temperature 0), so what is compared is what an
editor or an agent sees: from sending a request to its last token. Three workloads:

- ``new``: prompts the server has not seen, every prompt of each category (code, rewrite,
  chat) in each round, starting from a different one each round; a round's figure is its tokens
  over its seconds (one 128-token answer moves 3-5% between identical requests on a shared
  machine: a round of one prompt decided the median by noise);
- ``repeat``: the same request four times in a row to one server, as an agent retrying or a
  regenerate does; the figure is the mean of requests 2-4;
- ``agent``: a recorded tool-using conversation replayed turn by turn, each turn resending the
  whole context with the file the agent read, as coding agents do.

Each configuration (ours ``off`` and ``auto``; llama-server plain and each ``--spec-type``) is a
fresh server process per round (so nothing learned leaks between rounds or sides). All of a
round's servers are alive at once and each request goes to every one in turn, the order rotating
request by request, after the machine went idle: a shared machine that slows down for a minute
slows every configuration alike. The reported ratios are the
medians of ratios taken within the same round. Greedy texts are compared with llama-server
plain's too: the same model at temperature 0 should write the same text on both.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx2 as httpx

from desktop_app.bench.quiet import wait_for_quiet

OURS = {"ours off": "off", "ours auto": "auto"}
PEER_SPEC_TYPES = {"peer plain": None, "peer ngram-simple": "ngram-simple", "peer ngram-mod": "ngram-mod"}
REPEATS = 4  # requests per `repeat` round; the figure is the mean of the repeats after the first
NEW_CATEGORIES = ("code", "rewrite", "chat")
T = TypeVar("T")

_FILE = '''import json
from pathlib import Path


def load_settings(path: Path) -> dict:
    """Read the settings file, or the defaults when it is missing."""
    if not path.exists():
        return {"theme": "light", "font_size": 12, "recent": []}
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def save_settings(path: Path, settings: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        json.dump(settings, handle, indent=2)


def add_recent(settings: dict, name: str, limit: int = 10) -> dict:
    recent = [n for n in settings.get("recent", []) if n != name]
    settings["recent"] = [name, *recent][:limit]
    return settings
'''

# The agent loop: each step's messages are the recorded conversation so far; the model answers
# the last one. The tool calls and results are text, so every chat template renders them alike.
_AGENT_TURNS = [
    "Rename load_settings to read_settings in settings.py and show me the whole file.",
    "Now make add_recent keep at most 5 names by default. Output the complete file again.",
    "Add a docstring to save_settings and print the full file once more.",
]


def agent_conversation(step: int) -> list[dict[str, str]]:
    """The messages of step ``step`` (0-based) of the recorded agent loop."""
    messages = [{"role": "system", "content": "You are a coding agent. You read files with tools and edit them."}]
    for i in range(step + 1):
        messages.append({"role": "user", "content": _AGENT_TURNS[i]})
        messages.append(
            {
                "role": "assistant",
                "content": '<tool_call>{"name": "read_file", "arguments": {"path": "settings.py"}}</tool_call>',
            }
        )
        messages.append({"role": "user", "content": f"Tool result (read_file settings.py):\n```python\n{_FILE}```"})
        if i < step:
            messages.append({"role": "assistant", "content": f"Done. Here is the file:\n```python\n{_FILE}```"})
    return messages


@dataclass(frozen=True)
class Answer:
    text: str
    tokens: int
    seconds: float  # from sending the request to the last token
    timings: dict[str, Any] = field(default_factory=dict)  # the server's own, from its last chunk

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds


def ask(
    url: str, messages: list[dict[str, str]], max_tokens: int, extra: dict[str, Any], count: Callable[[str], int]
) -> Answer:
    """A streamed request; its tokens are ``count(text)`` for both servers alike (llama-server's
    usage counts the end-of-generation token, ours does not: one token in 70 on a short answer).
    Both servers send their ``timings`` (decode ms, drafted and accepted tokens) with the last chunk."""
    body = {
        "model": "any",
        "messages": messages,
        "temperature": 0,
        "max_tokens": max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
        **extra,
    }
    pieces: list[str] = []
    timings: dict[str, Any] = {}
    with httpx.Client(timeout=600) as client:
        start = time.perf_counter()
        with client.stream("POST", url + "/v1/chat/completions", json=body) as reply:
            reply.raise_for_status()
            for line in reply.iter_lines():
                if not line.startswith("data: {"):
                    continue
                chunk = json.loads(line[6:])
                timings = chunk.get("timings") or timings
                for choice in chunk.get("choices") or []:
                    pieces.append((choice.get("delta") or {}).get("content") or "")
        seconds = time.perf_counter() - start
    text = "".join(pieces)
    return Answer(text, count(text), seconds, timings)


def token_counter(model: Path) -> Callable[[str], int]:
    """Tokens in a text by the model's own vocabulary (loaded alone, no weights)."""
    from desktop_app.library.vocab import VocabOnlyModel

    tokenizer = VocabOnlyModel(model)  # held by the closure: freeing it frees the vocabulary

    def count(text: str) -> int:
        return len(tokenizer.tokenize(text, add_special=False, parse_special=False))

    return count


def peer_cpu_flags(cpuinfo: str | None = None) -> list[str]:
    """llama.cpp's flags for this CPU (``cpuinfo``: /proc/cpuinfo's text). On one with AMX its
    stock build crashes at the first decode (its tile kernels, llama.cpp #20824), so there its
    weights stay out of AMX as ours do (our patch, docs/engine-notes.md "AMX"); elsewhere none."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8")
        except OSError:
            return []
    return ["--no-repack"] if " amx_tile" in cpuinfo else []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def peer_env(peer_bin: Path) -> dict[str, str]:
    """llama-server's environment: its own libraries (to it alone: SpecChat loads its patched
    ones, and the peer's crash it) and, on a CPU with AMX, no repacking, whose path crashes at
    start there (docs/engine-notes.md, "AMX")."""
    libraries = os.pathsep.join(p for p in (str(peer_bin), os.environ.get("LD_LIBRARY_PATH", "")) if p)
    env = {**os.environ, "LD_LIBRARY_PATH": libraries}
    if peer_cpu_flags():
        env["LLAMA_ARG_REPACK"] = "0"
    return env


@contextlib.contextmanager
def server(name: str, model: Path, peer_bin: Path, threads: int, ctx: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """A fresh server for configuration ``name``: its base URL and the request fields it needs."""
    port = _free_port()
    with tempfile.TemporaryDirectory() as home:
        if name in OURS:
            command = [sys.executable, "-m", "desktop_app", "serve", "--target", str(model), "--port", str(port)]
            command += ["--threads", str(threads), "--ctx", str(ctx), "--spec", OURS[name]]
            extra: dict[str, Any] = {"speculation": OURS[name]}
        else:
            command = [str(peer_bin / "llama-server"), "-m", str(model), "--port", str(port), "-t", str(threads)]
            command += ["-c", str(ctx), "-np", "1", "--jinja", *peer_cpu_flags()]
            if (spec := PEER_SPEC_TYPES[name]) is not None:
                command += ["--spec-type", spec]
            extra = {}
        env = os.environ if name in OURS else peer_env(peer_bin)
        process = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**env, "SPECCHAT_HOME": home},
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"{name} exited with {process.returncode}: {' '.join(command)}")
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(url + "/health", timeout=2).status_code == 200:
                        break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name} did not start in 120 s")
                time.sleep(0.2)
            yield url, extra
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextlib.contextmanager
def live_servers(
    names: list[str], args: argparse.Namespace, peer_bin: Path, count: Callable[[str], int]
) -> Iterator[dict[str, tuple[str, dict[str, Any]]]]:
    """A fresh server per configuration (``args``: model, threads, ctx, quiet_wait), all alive at
    once, each past its first connection and first pass, once the machine went quiet (a server
    still measuring: Auto calibrates after loading). Per name: its URL and request fields."""
    with contextlib.ExitStack() as stack:
        live = {n: stack.enter_context(server(n, args.model, peer_bin, args.threads, args.ctx)) for n in names}
        for url, extra in live.values():
            ask(url, [{"role": "user", "content": "Hi"}], 4, extra, count)
        wait_for_quiet(args.quiet_wait)
        yield live


def _steps(new_prompts: dict[str, list[str]], tokens: int) -> list[tuple[str, list[dict[str, str]], int]]:
    """A round's requests in order: (workload, messages, max_tokens)."""
    steps = [(f"new {c}", [{"role": "user", "content": p}], tokens) for c, ps in new_prompts.items() for p in ps]
    again = [{"role": "user", "content": new_prompts["code"][0] + " (again)"}]
    steps += [("repeat", again, tokens)] * REPEATS
    steps += [("agent", agent_conversation(step), tokens * 2) for step in range(len(_AGENT_TURNS))]
    return steps


def rotated(items: list[T], by: int) -> list[T]:
    """Every item, starting from the ``by``-th (round r starts the category at its r-th prompt)."""
    start = by % len(items)
    return items[start:] + items[:start]


def _round(
    names: list[str],
    args: argparse.Namespace,
    peer_bin: Path,
    new_prompts: dict[str, list[str]],
    count: Callable[[str], int],
) -> dict[str, dict[str, Any]]:
    """One round of every workload, each configuration on a fresh server of its own, all alive
    at once and the requests interleaved: each request goes to every server in turn (the order
    rotating step by step), so a machine that slows down for a minute slows every side alike.
    Tokens/s per configuration and workload, and the texts."""
    answers: dict[str, dict[str, list[Answer]]] = {n: {} for n in names}
    with live_servers(names, args, peer_bin, count) as live:
        for i, (workload, messages, tokens) in enumerate(_steps(new_prompts, args.max_tokens)):
            for n in rotated(names, i):
                url, extra = live[n]
                answers[n].setdefault(workload, []).append(ask(url, messages, tokens, extra, count))
    out: dict[str, dict[str, Any]] = {}
    for n, by_workload in answers.items():
        out[n] = {"texts": {w: [x.text for x in a] for w, a in by_workload.items()}}
        for w, a in by_workload.items():
            if w == "repeat":  # the requests after the first: what repeating gains
                out[n][w] = statistics.mean(x.tokens_per_s for x in a[1:])
            else:
                out[n][w] = sum(x.tokens for x in a) / sum(x.seconds for x in a)
    return out


def measure(args: argparse.Namespace, prompts: dict[str, list[str]]) -> dict[str, Any]:
    from desktop_app.engine import default_model_path

    peer_bin = Path(args.peer)
    if not (peer_bin / "llama-server").exists():
        raise ValueError(f"{peer_bin / 'llama-server'} not found: build it with shared/tools/build-llama-peer.sh DIR")
    args.model = args.target or default_model_path()
    args.threads = args.threads or 2
    args.ctx = 4096
    names = [*OURS, *PEER_SPEC_TYPES]
    rounds = max(args.repeats, 1)
    count = token_counter(Path(args.model))
    per_round: list[dict[str, dict[str, Any]]] = []
    for r in range(rounds):
        new_prompts = {c: rotated(prompts[c], r) for c in NEW_CATEGORIES}
        results = _round(rotated(names, r), args, peer_bin, new_prompts, count)
        for name in names:
            shown = "  ".join(f"{w} {v:6.1f}" for w, v in results[name].items() if w != "texts")
            print(f"  round {r + 1} {name:18} {shown}", file=sys.stderr, flush=True)
        per_round.append(results)
    workloads = [w for w in per_round[0][names[0]] if w != "texts"]
    peers = list(PEER_SPEC_TYPES)
    summary: dict[str, Any] = {}
    for w in workloads:
        best_peer = max(peers, key=lambda p: statistics.median(rr[p][w] for rr in per_round))
        summary[w] = {
            "tokens_per_s": {n: round(statistics.median(rr[n][w] for rr in per_round), 1) for n in names},
            "best_peer": best_peer,
            "ours_auto_vs_best_peer": round(
                statistics.median(rr["ours auto"][w] / rr[best_peer][w] for rr in per_round), 3
            ),
            "ours_off_vs_peer_plain": round(
                statistics.median(rr["ours off"][w] / rr["peer plain"][w] for rr in per_round), 3
            ),
        }

    def same_texts(a: str, b: str) -> dict[str, str]:
        """Per workload: how many of the answers ``a`` gave are word for word ``b``'s."""
        out = {}
        for w in per_round[0][a]["texts"]:
            pairs = [(x, y) for rr in per_round for x, y in zip(rr[a]["texts"][w], rr[b]["texts"][w], strict=True)]
            out[w] = f"{sum(x == y for x, y in pairs)}/{len(pairs)}"
        return out

    return {
        "model": str(args.model),
        "threads": args.threads,
        "max_tokens": args.max_tokens,
        "rounds": rounds,
        "peer_flags": peer_cpu_flags(),
        "summary": summary,
        "greedy_text_same_as_peer_plain": same_texts("ours off", "peer plain"),
        "auto_text_same_as_off": same_texts("ours auto", "ours off"),
        "runs": [{n: {w: v for w, v in res.items() if w != "texts"} for n, res in rr.items()} for rr in per_round],
    }
