"""How a message is shown: its footer of speed and drafting figures (its text:
:mod:`desktop_app.ui.rich_text`)."""

from __future__ import annotations

from typing import Any

from desktop_app.engine.api import DrafterKind, FinishReason, SpecMode
from desktop_app.ui.drafter_tints import drafter_label


def format_drafts(by_drafter: object) -> str:
    """Who drafted an answer's tokens: "prompt lookup 40/52, n-gram map 3/5" (accepted/drafted),
    most accepted first; "" when ``by_drafter`` (stats' DrafterKind value -> (drafted, accepted),
    lists once read back from the history) says nothing usable."""
    if not isinstance(by_drafter, dict):
        return ""
    counts: list[tuple[str, int, int]] = []
    for drafter, pair in by_drafter.items():
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and all(isinstance(n, int) for n in pair):
            drafted, accepted = pair
            if drafted > 0:
                counts.append((str(drafter), drafted, accepted))
    counts.sort(key=lambda c: (-c[2], -c[1]))
    return ", ".join(f"{drafter_label(d).lower()} {a}/{n}" for d, n, a in counts)


def format_footer(stats: dict[str, Any]) -> str:
    """One line under an answer: tokens/s, time to first token, tokens, acceptance, mode and
    which drafters made the accepted tokens (or, for answers stored without that, the main one)."""
    tps = stats.get("decode_tokens_per_s") or stats.get("window_tokens_per_s") or 0.0
    parts = [
        f"{tps:.1f} tok/s",
        f"TTFT {stats.get('ttft_s', 0.0) * 1000:.0f} ms",
        f"{stats.get('generated_tokens', 0)} tokens",
    ]
    if stats.get("drafted"):
        parts.append(f"acceptance {stats.get('acceptance_rate', 0.0):.0%}")
    else:
        parts.append("acceptance –")
    mode = str(stats.get("mode", SpecMode.OFF.value))
    drafts = format_drafts(stats.get("by_drafter"))
    if drafts:
        parts += [f"mode {mode}", f"drafts: {drafts}"]
    else:
        drafter = stats.get("drafter")  # a DrafterKind value, or NO_DRAFTER when nobody drafted
        kinds = {k.value for k in DrafterKind}
        parts.append(f"mode {mode}" + (f" ({drafter_label(drafter).lower()})" if drafter in kinds else ""))
    reason = stats.get("finish_reason")
    if reason == FinishReason.CANCELLED:
        parts.append("stopped")
    elif reason == FinishReason.INTERRUPTED:
        parts.append(f"interrupted: {stats.get('error') or 'the engine stopped'}")
    elif reason == FinishReason.CONTEXT_FULL:
        parts.append("context full")
    return " · ".join(parts)
