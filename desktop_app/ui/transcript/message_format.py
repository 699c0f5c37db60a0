"""How a message is shown: its footer of speed and drafting figures (its text:
:mod:`desktop_app.ui.transcript.rich_text`)."""

from __future__ import annotations

from typing import Any

from desktop_app.engine.api import DrafterKind, FinishReason, SpecMode
from desktop_app.ui.transcript.drafter_tints import drafter_label
from desktop_app.ui.widgets.plain_text import plain_tip


def _name(drafter: str) -> str:
    """A drafter's name inside a sentence: "prompt lookup", "built-in (MTP)", "Gemma 4 assistant"."""
    label = drafter_label(drafter)
    return label if label.startswith("Gemma") else label[:1].lower() + label[1:]


def _share(accepted: int, drafted: int) -> str:
    """The one acceptance figure: accepted over drafted tokens, as a percentage."""
    return f"{accepted / drafted:.0%}" if drafted else "–"


def _counts(by_drafter: object) -> list[tuple[str, int, int]]:
    """(drafter, drafted, accepted) from stats' ``by_drafter`` (DrafterKind value -> (drafted,
    accepted), lists once read back from the history), most useful (most accepted) first."""
    if not isinstance(by_drafter, dict):
        return []
    counts: list[tuple[str, int, int]] = []
    for drafter, pair in by_drafter.items():
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and all(isinstance(n, int) for n in pair):
            drafted, accepted = pair
            if drafted > 0:
                counts.append((str(drafter), drafted, accepted))
    counts.sort(key=lambda c: (-c[2], -c[1]))
    return counts


def format_drafts(by_drafter: object) -> str:
    """What the drafters did, in a sentence: "prompt lookup drafted 52 tokens, 40 were right;
    n-gram map drafted 5, 3 were right", most useful first; "" when nothing usable was drafted."""
    parts = [
        f"{_name(d)} drafted {n}{' tokens' if i == 0 else ''}, {a} {'was' if a == 1 else 'were'} right"
        for i, (d, n, a) in enumerate(_counts(by_drafter))
    ]
    return "; ".join(parts)


def _int(stats: dict[str, Any], key: str) -> int:
    value = stats.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def format_thinking(stats: dict[str, Any]) -> str:
    """Thinking and answer counted apart, when the answer thought: "thought 120 tokens (75 % of
    drafts right), answered 60 (50 %)"; "" otherwise."""
    thought = _int(stats, "thinking_tokens")
    if thought <= 0:
        return ""
    t_drafted, t_accepted = _int(stats, "thinking_drafted"), _int(stats, "thinking_accepted")
    a_drafted = max(0, _int(stats, "drafted") - t_drafted)
    a_accepted = max(0, _int(stats, "accepted") - t_accepted)
    answered = max(0, _int(stats, "generated_tokens") - thought)
    if not (t_drafted or a_drafted):
        return f"thought {thought} tokens, answered {answered}"
    return (
        f"thought {thought} tokens ({_share(t_accepted, t_drafted)} of drafts right), "
        f"answered {answered} ({_share(a_accepted, a_drafted)})"
    )


def no_answer_note(stats: dict[str, Any] | None) -> str:
    """Why an answer that only thought shows no answer, and what to do about it."""
    stats = stats or {}
    reason = stats.get("finish_reason")
    if reason == FinishReason.LENGTH:
        tokens = _int(stats, "generated_tokens")
        return f"The model used all {tokens} tokens thinking and gave no answer: raise Max tokens or turn Think off"
    if reason == FinishReason.CONTEXT_FULL:
        return "The model filled the context thinking and gave no answer: raise the context or turn Think off"
    if reason in (FinishReason.CANCELLED, FinishReason.INTERRUPTED):
        return "Stopped while the model was thinking: there is no answer"
    return "The model gave no answer after thinking"


def _times(ratio: float) -> str:
    """A speed ratio in words, ready for what it compares with: "1.8x faster than", "1.3x
    slower than", "about as fast as"."""
    if ratio >= 1.05:
        return f"{ratio:.1f}x faster than"
    if ratio <= 1 / 1.05:
        return f"{1 / ratio:.1f}x slower than"
    return "about as fast as"


def format_speedup(stats: dict[str, Any]) -> str:
    """A measured speed-up, named for what measured it (never a prediction): a race's median
    ("1.8x faster than without speculation in a race of 3, 1.5-2.1x"), else the engine's own
    ("1.6x faster than plain decoding, measured by the engine"); "" when none was measured."""
    race = stats.get("race")
    if isinstance(race, dict) and isinstance(race.get("speedup"), (int, float)) and race["speedup"] > 0:
        rounds, low, high = race.get("rounds", 0), race.get("low", 0.0), race.get("high", 0.0)
        return f"{_times(race['speedup'])} without speculation in a race of {rounds} ({low:.1f}–{high:.1f}x per round)"
    measured = stats.get("measured_speedup")
    if isinstance(measured, (int, float)) and measured > 0:
        return f"{_times(measured)} plain decoding, measured by the engine"
    return ""


def answer_speed(stats: dict[str, Any]) -> float:
    """An answer's tokens/s from its stats' dict: :attr:`GenerationStats.answer_tokens_per_s`
    (answers in the history are dicts), the one speed the footer and the speed panel show."""
    return stats.get("decode_tokens_per_s") or stats.get("window_tokens_per_s") or 0.0


def speed_text(tokens_per_s: float) -> str:
    """A speed as the footer and the dial write it ("42.1"): rounded as the stats' dict rounds
    it first, so the dial's exact figure and the footer's rounded one read the same."""
    return f"{round(tokens_per_s, 3):.1f}"


# An answer's stats' list of what it read of the attached documents and what it copied from
# them ("read 3 passages of report.pdf: pages 2, 5", "copied 60 % from report.pdf"): its third line.
DOCUMENTS_NOTE = "documents"


def format_footer(stats: dict[str, Any]) -> str:
    """Two lines under an answer, in plain words: its speed ("42.1 tokens/s · first token after
    0.31 s · 180 tokens"), then what the drafters did and a measured speed-up; a third names
    the documents' passages it read and what it copied (:data:`DOCUMENTS_NOTE`). The exact
    figures are in :func:`footer_details` (the footer's tooltip)."""
    first = [
        f"{speed_text(answer_speed(stats))} tokens/s",
        f"first token after {stats.get('ttft_s', 0.0):.2f} s",
        f"{stats.get('generated_tokens', 0)} tokens",
    ]
    reason = stats.get("finish_reason")
    if reason == FinishReason.CANCELLED:
        first.append("stopped")
    elif reason == FinishReason.INTERRUPTED:
        first.append(f"interrupted: {stats.get('error') or 'the engine stopped'}")
    elif reason == FinishReason.CONTEXT_FULL:
        first.append("context full")
    mode = str(stats.get("mode", SpecMode.OFF.value))
    drafts = format_drafts(stats.get("by_drafter"))
    if not drafts and _int(stats, "drafted"):  # answers stored before drafters were counted
        drafter = stats.get("drafter")
        main = f" (mostly {_name(drafter)})" if drafter in {k.value for k in DrafterKind} else ""
        right = _int(stats, "accepted")
        drafts = f"drafted {_int(stats, 'drafted')} tokens, {right} {'was' if right == 1 else 'were'} right{main}"
    if mode == SpecMode.OFF.value:
        second = ["without speculation"]
    elif drafts:
        second = [drafts]
    else:
        second = ["nothing was drafted"]
    second += [part for part in (format_thinking(stats), format_speedup(stats)) if part]
    notes = stats.get(DOCUMENTS_NOTE)
    third = [n for n in notes if isinstance(n, str)] if isinstance(notes, list) else []
    return " · ".join(first) + "\n" + " · ".join(second) + ("\n" + " · ".join(third) if third else "")


def footer_details(stats: dict[str, Any]) -> str:
    """The exact figures behind a footer, for experts (plain text: the footer's tooltip)."""
    drafted, accepted = _int(stats, "drafted"), _int(stats, "accepted")
    passes, tokens = _int(stats, "target_passes"), _int(stats, "generated_tokens")
    lines = [
        f"Time to first token (TTFT): {stats.get('ttft_s', 0.0) * 1000:.0f} ms",
        f"Prompt: {_int(stats, 'prompt_tokens')} tokens, {_int(stats, 'prompt_tokens_new')} new, "
        f"read in {stats.get('prefill_s', 0.0):.2f} s",
        f"Decoding: {tokens} tokens in {stats.get('decode_s', 0.0):.2f} s, {passes} target passes"
        + (f" ({tokens / passes:.2f} tokens per pass)" if passes else ""),
        f"Mode: {stats.get('mode', SpecMode.OFF.value)}, k up to {_int(stats, 'draft_max')}",
        f"Acceptance: {accepted}/{drafted} drafted tokens ({_share(accepted, drafted)})",
    ]
    lines += [f"  {drafter_label(d)}: {a}/{n} ({_share(a, n)})" for d, n, a in _counts(stats.get("by_drafter"))]
    lines.append(f"Drafting {stats.get('draft_s', 0.0):.3f} s, verifying {stats.get('verify_s', 0.0):.3f} s")
    plain = _int(stats, "plain_passes")
    if plain:
        per = stats.get("plain_s", 0.0) / plain
        lines.append(f"Plain passes: {plain}, {per * 1000:.1f} ms each (the measured speed-up's base)")
    if stats.get("threads"):
        lines.append(f"Threads: {stats['threads']}")
    if stats.get("auto_reason"):
        lines.append(f"Auto's plan (a prediction, not a result): {stats['auto_reason']}")
    return "\n".join(lines)


def tooltip_html(text: str) -> str:
    """Plain text as a tooltip that shows every character as typed (no HTML interpretation)."""
    return plain_tip(text)
