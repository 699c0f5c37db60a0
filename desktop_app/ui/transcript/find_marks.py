"""Matches of a search in a message's rendered text (a :class:`TextLabel`'s rich text): counted,
marked (every match on a light background, the current one on a stronger one) and placed (how far
down the label the current one is, to scroll to it). Case-insensitive, as the find bar searches."""

from __future__ import annotations

import re

from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextDocument
from shiboken6 import isValid

from desktop_app.ui.transcript.text_label import TextLabel, label_document

MATCH_TINT = "#fff2a8"  # every match: a highlighter's yellow
CURRENT_TINT = "#ff9d3b"  # the current match: orange, as in browsers
MATCH_TEXT = "#000000"  # dark text on both, in a light theme and a dark one
_BODY = re.compile(r"<body[^>]*>(.*)</body>", re.S)


def _matches(doc: QTextDocument, query: str) -> list[QTextCursor]:
    """The cursors selecting each match of ``query`` in ``doc``, in order (QTextDocument.find
    ignores case unless told otherwise)."""
    found: list[QTextCursor] = []
    if not query:
        return found
    cursor = doc.find(query)
    while not cursor.isNull():
        found.append(QTextCursor(cursor))
        cursor = doc.find(query, cursor)
    return found


def count_in(label: TextLabel, query: str) -> int:
    """How many matches of ``query`` ``label`` shows."""
    doc = label_document(label.text(), label.font())
    if not query or query.lower() not in doc.toPlainText().lower():
        return 0
    return len(_matches(doc, query))


def marked_html(html: str, query: str, current: int = -1) -> str:
    """``html`` with every match of ``query`` on :data:`MATCH_TINT`, the ``current``-th (from 0)
    on :data:`CURRENT_TINT`; the inner HTML of the document Qt rebuilds (the label's font applies)."""
    doc = QTextDocument()
    doc.setHtml(html)
    for index, cursor in enumerate(_matches(doc, query)):
        mark = QTextCharFormat()
        mark.setBackground(QColor(CURRENT_TINT if index == current else MATCH_TINT))
        mark.setForeground(QColor(MATCH_TEXT))
        cursor.mergeCharFormat(mark)
    rebuilt = doc.toHtml()
    body = _BODY.search(rebuilt)
    return body.group(1) if body else rebuilt


def match_y(label: TextLabel, query: str, index: int) -> int:
    """How far down ``label`` (in its pixels) the line of its ``index``-th match of ``query`` is."""
    margins = label.contentsMargins()
    doc = label_document(label.text(), label.font())
    doc.setTextWidth(max(1, label.width() - margins.left() - margins.right()))
    found = _matches(doc, query)
    if not 0 <= index < len(found):
        return 0
    cursor = found[index]
    block = cursor.block()
    y = doc.documentLayout().blockBoundingRect(block).y()
    layout = block.layout()
    if layout is not None:
        line = layout.lineForTextPosition(cursor.selectionStart() - block.position())
        if line.isValid():
            y += line.y()
    return margins.top() + round(y)


class LabelMarks:
    """The labels marked for a search, each with the HTML it showed before, to put back."""

    def __init__(self) -> None:
        self._shown: dict[TextLabel, tuple[str, str]] = {}  # label -> (its HTML before, the marked HTML)
        self._current: dict[TextLabel, int] = {}  # label -> the match marked current in it (-1: none)

    def mark(self, label: TextLabel, query: str, current: int = -1) -> None:
        """Mark ``label``'s matches (its ``current``-th as the current one)."""
        shown = self._shown.get(label)
        if shown is not None and label.text() == shown[1] and self._current.get(label) == current:
            return  # marked so already: not laid out again
        before = self._original(label)
        marked = marked_html(before, query, current)
        self._shown[label] = (before, marked)
        self._current[label] = current
        label.setText(marked)

    def unmark_all(self) -> None:
        self._current.clear()
        for label, (before, marked) in self._shown.items():
            if isValid(label) and label.text() == marked:  # (rendered again since: its new text stays)
                label.setText(before)
        self._shown.clear()

    def _original(self, label: TextLabel) -> str:
        """The HTML ``label`` shows without marks (a render since the marks replaced them: that)."""
        before, marked = self._shown.get(label, ("", None))
        return before if marked is not None and label.text() == marked else label.text()
