"""How a message is shown: its footer of speed and drafting figures, and its text with the
accepted drafts tinted per drafter (HTML for the transcript's rich text)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtGui import QPalette, QTextCharFormat, QTextCursor, QTextDocument

from desktop_app.engine.api import DrafterKind, FinishReason, SpecMode
from desktop_app.engine_process.protocol import Piece
from desktop_app.ui.drafter_tints import drafter_label, drafter_tint


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


def _draft_marks(source: str, drafters: Sequence[str], rendered: str) -> list[tuple[int, str]]:
    """(position in the rendered text, drafter) of the characters that came from drafts.

    ``drafters`` holds each source character's drafter ("" for the target's own text). Markdown
    rendering drops markup (``**``, fences, ``#``) and changes whitespace, so source and rendered
    text are aligned greedily: equal characters match, whitespace matches whitespace, and
    unmatched markup in the source is skipped.
    """
    marks: list[tuple[int, str]] = []
    j, n = 0, len(rendered)
    for i, c in enumerate(source):
        while j < n and rendered[j].isspace() and not c.isspace():
            j += 1  # whitespace the renderer added
        if j >= n:
            break
        r = rendered[j]
        if c == r or (c.isspace() and r.isspace()):
            if drafters[i]:
                marks.append((j, drafters[i]))
            j += 1
    return marks


def highlighted_html(segments: Sequence[Piece], palette: QPalette) -> str:
    """Markdown rendered to HTML with the text from each drafter's accepted tokens on that
    drafter's tint (:func:`drafter_tint`)."""
    source = "".join(t for t, _ in segments)
    drafters = [d for t, d in segments for _ in t]
    doc = QTextDocument()
    doc.setMarkdown(source)
    marks = _draft_marks(source, drafters, doc.toPlainText())
    cursor = QTextCursor(doc)
    formats: dict[str, QTextCharFormat] = {}
    run: tuple[int, int, str] | None = None  # start, last position, drafter
    for pos, drafter in [*marks, (-1, "")]:
        if run is not None and pos == run[1] + 1 and drafter == run[2]:
            run = (run[0], pos, drafter)
            continue
        if run is not None:
            start, last, kind = run
            if kind not in formats:
                formats[kind] = QTextCharFormat()
                formats[kind].setBackground(drafter_tint(kind, palette))
            cursor.setPosition(start)
            cursor.setPosition(last + 1, QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(formats[kind])
        run = (pos, pos, drafter) if pos >= 0 else None
    return doc.toHtml()
