"""``python -m lab repeat``: the same request again, as an agent retrying or a regenerate sends it.

The same code-edit request is sent ``--repeats`` times through the real engine (its loop,
drafters, Auto and n-gram cache), speculation off and Auto, with the target's passes replayed
at a cost table (:mod:`lab.replay`): counts (target passes, tokens per pass, drafts accepted,
the longest draft) are what the engine does, the seconds are the table's, without the noise of
a shared machine. Each round's answer must be the same text in every mode (greedy).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from desktop_app.engine import Engine
from desktop_app.engine.api import GenerateRequest, Message, SpecMode
from desktop_app.engine.events import Finished
from lab.replay import Answers, replaying

CODE_EDIT = (
    "Rename the variable `items` to `orders` in this function and output the whole function:\n\n"
    "def total_price(items, tax_rate):\n"
    "    subtotal = 0\n"
    "    for item in items:\n"
    "        subtotal += item.price * item.quantity\n"
    "    discount = 0.1 * subtotal if len(items) > 10 else 0\n"
    "    taxed = (subtotal - discount) * (1 + tax_rate)\n"
    "    return round(taxed, 2)\n"
)


def _answer(engine: Engine, spec: SpecMode, max_tokens: int, prompt: str) -> dict[str, Any]:
    request = GenerateRequest(messages=[Message(role="user", content=prompt)], max_tokens=max_tokens, spec=spec)
    finished = next(e for e in engine.generate(request) if isinstance(e, Finished))
    s = finished.stats
    return {
        "text": finished.text,
        "tokens": s.generated_tokens,
        "passes": s.target_passes,
        "tokens_per_pass": round(s.generated_tokens / max(s.target_passes, 1), 2),
        "drafted": s.drafted,
        "accepted": s.accepted,
        "longest_draft": max((d for d, _ in s.cycles), default=0),
        "seconds": round(s.decode_s, 4),
    }


def run(engine: Engine, args: argparse.Namespace, pass_ms: list[float], prompt: str = CODE_EDIT) -> dict[str, Any]:
    """``args.repeats`` rounds of the same request, off then Auto, replayed at ``pass_ms``."""
    answers: Answers = {}
    rounds: list[dict[str, Any]] = []
    with replaying(engine, [m / 1e3 for m in pass_ms], answers, args.max_tokens, max(args.draft_max)):
        engine.ngrams.clear()  # a fresh process: nothing learned yet
        for r in range(args.repeats):
            state = engine.ngrams.snapshot()  # off learns too: Auto then sees what one request taught
            off = _answer(engine, SpecMode.OFF, args.max_tokens, prompt)
            engine.ngrams.restore(state)
            auto = _answer(engine, SpecMode.AUTO, args.max_tokens, prompt)
            if off.pop("text") != auto.pop("text"):
                raise AssertionError(f"round {r + 1}: Auto's greedy text differs from off's")
            rounds.append({"round": r + 1, "off": off, "auto": auto})
    report = {"pass_ms": pass_ms, "max_tokens": args.max_tokens, "rounds": rounds}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "repeat.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    for row in rounds:
        a, o = row["auto"], row["off"]
        print(
            f"round {row['round']}: {a['tokens']} tokens, off {o['passes']} passes, auto {a['passes']} passes "
            f"({a['tokens_per_pass']} tokens/pass, {a['accepted']}/{a['drafted']} accepted, longest draft "
            f"{a['longest_draft']}), auto {o['seconds'] / max(a['seconds'], 1e-9):.2f}x of off at the table"
        )
    return report
