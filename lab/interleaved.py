"""``python -m lab.interleaved``: two long conversations asked A, B, A, B, A, with and without the prompt cache.

Each conversation opens with its own document (about ``--tokens`` tokens of seeded text) and a
question; each later turn sends the whole conversation again with the previous answer and a new
question, as the window and API clients do. Every request is non-streamed through
``Engine.generate`` (greedy), one engine per configuration (``--prompt-cache-mb`` 0, then the
default), the configurations alternating request by request so a machine that slows down slows
both. Printed per request: wall seconds, prompt tokens, tokens read anew; then whether the texts
were identical (they must be: the cache changes nothing but the time).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from desktop_app.engine import Engine, GenerateRequest, ModelOptions, default_model_path
from desktop_app.engine.api import PROMPT_CACHE_MB, SpecMode
from desktop_app.engine.events import Finished, final_result
from desktop_app.engine.messages import Message

_WORDS = (
    "harbour library market station ferry bakery archive depot valley garden workshop tower river "
    "orchard bridge council winter budget letters filters trails apprentices wall seeds timber birds"
).split()
_VERBS = "repaired counted measured planted organised translated tested mapped rebuilt catalogued".split()
QUESTIONS = ("Summarise the document in two sentences.", "Who is mentioned most often?", "What happened last?")


def document(seed: int, tokens: int, count: Any) -> str:
    """Seeded sentences until ``count(text)`` reaches ``tokens``."""
    rng = random.Random(seed)
    names = [f"{rng.choice('BCDFGHKLMNPRST')}{rng.choice('aeiou')}{rng.choice('lnrst')}a" for _ in range(12)]
    sentences: list[str] = []
    while len(sentences) % 5 or count(" ".join(sentences)) < tokens:
        w = rng.sample(_WORDS, 3)
        sentences.append(
            f"In year {rng.randint(1900, 2020)}, {rng.choice(names)} {rng.choice(_VERBS)} the {w[0]} near the "
            f"{w[1]} with {rng.randint(2, 400)} {w[2]}s."
        )
    return " ".join(sentences)


def conversation(doc: str, answers: list[str]) -> list[Message]:
    messages: list[Message] = [{"role": "user", "content": f"{doc}\n\n{QUESTIONS[0]}"}]
    for i, answer in enumerate(answers):
        messages += [{"role": "assistant", "content": answer}, {"role": "user", "content": QUESTIONS[i + 1]}]
    return messages


def ask(engine: Engine, messages: list[Message], args: argparse.Namespace) -> tuple[float, Finished]:
    request = GenerateRequest(messages=messages, max_tokens=args.max_tokens, spec=SpecMode(args.spec))
    start = time.perf_counter()
    result = final_result(engine.generate(request))
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m lab.interleaved", description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=2500, help="document length in tokens (default 2500)")
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--spec", choices=[m.value for m in SpecMode], default="off")
    parser.add_argument("--prompt-cache-mb", type=int, default=PROMPT_CACHE_MB.default, help="the 'after' budget")
    args = parser.parse_args()
    configs = {"before": 0, "after": args.prompt_cache_mb}
    engines: dict[str, Engine] = {}
    for name, mb in configs.items():
        engines[name] = Engine()
        options = ModelOptions(n_ctx=args.ctx, n_threads=args.threads, prompt_cache_mb=mb)
        engines[name].load_target(default_model_path(), options)
    target = engines["after"].target
    assert target is not None
    docs = {c: document(seed, args.tokens, lambda t: len(target.tokenize(t))) for c, seed in (("A", 1), ("B", 2))}
    answers: dict[str, dict[str, list[str]]] = {n: {"A": [], "B": []} for n in configs}
    rows: dict[str, list[tuple[str, float, Finished]]] = {n: [] for n in configs}
    for step, conv in enumerate("ABABA"):
        for name in configs if step % 2 == 0 else reversed(configs):
            seconds, result = ask(engines[name], conversation(docs[conv], answers[name][conv]), args)
            answers[name][conv].append(result.text)
            rows[name].append((conv, seconds, result))
            print(f"{name:6} {conv}: {seconds:6.2f} s, read {result.stats.prompt_tokens_new}", flush=True)
    for name in configs:
        print(f"{name} (--prompt-cache-mb {configs[name]}):")
        for conv, seconds, result in rows[name]:
            s = result.stats
            print(f"  {conv}: {seconds:6.2f} s  prompt {s.prompt_tokens:5d}  read {s.prompt_tokens_new:5d}")
        follow = [seconds for _, seconds, _ in rows[name][2:]]
        total = sum(seconds for _, seconds, _ in rows[name])
        print(f"  follow-ups (A, B, A): median {statistics.median(follow):.2f} s; sequence {total:.1f} s")
        engines[name].close()
    same = all(a[2].token_ids == b[2].token_ids for a, b in zip(rows["before"], rows["after"]))
    print(f"texts identical before/after: {same}")


if __name__ == "__main__":
    main()
