"""A message's text as the transcript's rich text: Markdown rendered from the escaped text
(:mod:`desktop_app.ui.markdown_html`), with the text from each
drafter's accepted tokens underlined in that drafter's colour."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QFont, QPalette, QTextCharFormat, QTextCursor, QTextDocument

from desktop_app.engine_process.protocol import Piece
from desktop_app.ui.drafter_tints import drafter_tint
from desktop_app.ui.markdown_html import CHROME, Rendered, render_markdown


def _content(doc: QTextDocument) -> tuple[str, list[int]]:
    """The document's text without what the renderer added (:data:`CHROME`), and the document
    position of each of its characters (-1 for the newline at each block's end)."""
    chars: list[str] = []
    positions: list[int] = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.charFormat().toolTip() != CHROME:
                text = fragment.text()
                chars.append(text)
                positions.extend(range(fragment.position(), fragment.position() + len(text)))
            it += 1
        chars.append("\n")
        positions.append(-1)  # the block's end: nothing to underline
        block = block.next()
    return "".join(chars), positions


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


def _underline(doc: QTextDocument, runs: list[tuple[int, int, str]], palette: QPalette) -> None:
    """Underline each (start, end, drafter) run of document positions in the drafter's colour."""
    cursor = QTextCursor(doc)
    formats: dict[str, QTextCharFormat] = {}
    for start, end, drafter in runs:
        if drafter not in formats:
            formats[drafter] = QTextCharFormat()
            formats[drafter].setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
            formats[drafter].setUnderlineColor(drafter_tint(drafter, palette))
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.mergeCharFormat(formats[drafter])


def message_html(
    segments: Sequence[Piece],
    palette: QPalette,
    highlight: bool = True,
    copied: int | None = None,
    font: QFont | None = None,
) -> Rendered:
    """The Markdown of ``segments`` (text, drafter) as rich text; with ``highlight``, the text of
    each drafter's accepted tokens is underlined in that drafter's colour (:func:`drafter_tint`).
    ``copied``: the code block whose Copy link reads "Copied"; ``font``: the label's (the marked
    text is rebuilt as HTML, which names its font)."""
    source = "".join(t for t, _ in segments)
    rendered = render_markdown(source, palette, copied)
    if not highlight or not any(d for _, d in segments):
        return rendered
    doc = QTextDocument()
    if font is not None:
        doc.setDefaultFont(font)
    doc.setHtml(rendered.html)
    text, positions = _content(doc)
    marks = _draft_marks(source, [d for t, d in segments for _ in t], text)
    runs: list[tuple[int, int, str]] = []
    for j, drafter in marks:
        pos = positions[j]
        if pos < 0:
            continue
        if runs and runs[-1][1] == pos and runs[-1][2] == drafter:
            runs[-1] = (runs[-1][0], pos + 1, drafter)
        else:
            runs.append((pos, pos + 1, drafter))
    _underline(doc, runs, palette)
    return Rendered(doc.toHtml(), rendered.code_blocks)
