"""A message's text as the transcript's rich text: Markdown rendered from the escaped text
(:mod:`desktop_app.ui.transcript.markdown_html`), with the text from each
drafter's accepted tokens underlined in that drafter's colour."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from PySide6.QtGui import QColor, QPalette, QTextCharFormat, QTextCursor, QTextDocument

from desktop_app.engine_process.protocol import Piece
from desktop_app.ui.transcript.drafter_tints import drafter_tint
from desktop_app.ui.transcript.markdown_html import CHROME, Block, Rendered, render_blocks

_BODY = re.compile(r"<body[^>]*>(.*)</body>", re.S)


def _content(doc: QTextDocument) -> tuple[str, list[int]]:
    """The document's text without what the renderer added (:data:`CHROME`, a formula's image), and the document
    position of each of its characters (-1 for the newline at each block's end)."""
    chars: list[str] = []
    positions: list[int] = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.charFormat().toolTip() != CHROME and not fragment.charFormat().isImageFormat():
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


Tints = tuple[tuple[str, str], ...]  # (drafter, colour name) of the drafters in a block


@lru_cache(maxsize=512)
def _marked(html: str, source: str, drafters: tuple[str, ...], tints: Tints) -> str:
    """A block's ``html`` with each character of ``source`` that came from a drafter
    (``drafters``: one per character, "" for the target's own) underlined in its colour; the
    inner HTML of the document Qt rebuilds from it (the label's own font applies)."""
    doc = QTextDocument()
    doc.setHtml(html)
    text, positions = _content(doc)
    formats: dict[str, QTextCharFormat] = {}
    for drafter, colour in tints:
        formats[drafter] = QTextCharFormat()
        formats[drafter].setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
        formats[drafter].setUnderlineColor(QColor(colour))
    runs: list[tuple[int, int, str]] = []
    for j, drafter in _draft_marks(source, drafters, text):
        pos = positions[j]
        if pos < 0:
            continue
        if runs and runs[-1][1] == pos and runs[-1][2] == drafter:
            runs[-1] = (runs[-1][0], pos + 1, drafter)
        else:
            runs.append((pos, pos + 1, drafter))
    cursor = QTextCursor(doc)
    for start, end, drafter in runs:
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.mergeCharFormat(formats[drafter])
    rebuilt = doc.toHtml()
    body = _BODY.search(rebuilt)
    return body.group(1) if body else rebuilt


def pieces_between(segments: Sequence[Piece], start: int, end: int, length: int) -> list[Piece]:
    """The (text, drafter) pieces of ``text[start:end]``, the text of ``segments`` being ``length``
    characters long; pieces of one drafter next to each other joined. Walks back from the end."""
    pieces: list[Piece] = []
    at = length
    for text, drafter in reversed(segments):
        if at <= start:
            break
        at -= len(text)
        piece = text[max(0, start - at) : max(0, end - at)]
        if not piece:
            continue
        if pieces and pieces[-1][1] == drafter:
            pieces[-1] = (piece + pieces[-1][0], drafter)
        else:
            pieces.append((piece, drafter))
    pieces.reverse()
    return pieces


def marked_blocks(
    blocks: Sequence[Block], pieces: Sequence[Piece], palette: QPalette, highlight: bool = True, offset: int = 0
) -> list[str]:
    """The HTML of each of ``blocks``, rendered from a text whose (text, drafter) pieces from
    ``offset`` on are ``pieces``; with ``highlight``, the text of each drafter's accepted tokens
    underlined in that drafter's colour (:func:`drafter_tint`). Each marked block is cached: while
    an answer streams, only its last block is marked again."""
    tints = tuple((d, drafter_tint(d, palette).name()) for d in dict.fromkeys(d for _, d in pieces if d))
    if not highlight or not tints or not blocks:
        return [b.html for b in blocks]
    drafters = [d for t, d in pieces for _ in t]
    parts = []
    for block in blocks:
        own = tuple(drafters[block.start - offset : block.start - offset + len(block.source)])
        parts.append(_marked(block.html, block.source, own, tints) if any(own) else block.html)
    return parts


def message_html(
    segments: Sequence[Piece], palette: QPalette, highlight: bool = True, copied: int | None = None
) -> Rendered:
    """The Markdown of ``segments`` (text, drafter) as rich text, block by block
    (:func:`render_blocks`, :func:`marked_blocks`); ``copied``: the code block whose Copy link
    reads "Copied"."""
    source = "".join(t for t, _ in segments)
    blocks = render_blocks(source, palette, copied)
    code = tuple(c for b in blocks for c in b.code_blocks)
    return Rendered("".join(marked_blocks(blocks, segments, palette, highlight)).rstrip(), code)
