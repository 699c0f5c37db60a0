"""Find in the conversation (Ctrl+F): every match of the find bar's text in the conversation's
messages, case-insensitive, counted on their whole text, the older messages not shown yet and the
part of a long message past its render (render_budget.py) included; the matches on screen marked,
the current one scrolled to.

A match is (message, n): the n-th match in that message's text, the messages numbered oldest first,
those not shown yet (ChatView's "show earlier") before those shown. Going to one shows the earlier
messages down to it, renders its message if that waits for its render (lazy_render.py), opens its
folded thinking when it is there, and scrolls to it; one past what the message renders opens the
whole text (the "Show all" view) with it selected.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QPoint, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QWidget
from shiboken6 import isValid

from desktop_app.ui.transcript.chat_view import ChatView
from desktop_app.ui.transcript.find_bar import FindBar
from desktop_app.ui.transcript.find_marks import LabelMarks, count_in, match_y
from desktop_app.ui.transcript.message_widget import MessageWidget
from desktop_app.ui.transcript.rich_label import RichText
from desktop_app.ui.transcript.text_label import TextLabel
from desktop_app.ui.window.shortcuts import FIND, FIND_NEXT, FIND_PREVIOUS, shortcut

Match = tuple[int, int]  # (message, n): the n-th match (from 0) in the message's text


def count_matches(text: str, query: str) -> int:
    return text.lower().count(query.lower()) if query else 0


def nth_position(text: str, query: str, n: int) -> int:
    """Where the ``n``-th match (from 0) of ``query`` in ``text`` begins; -1 when there is none."""
    low, q, at = text.lower(), query.lower(), -len(query)
    for _ in range(n + 1):
        at = low.find(q, at + len(q))
        if at < 0:
            return -1
    return at


class ConversationFind(QObject):
    """The find bar's search in ``view``'s conversation; Ctrl+F, F3 and Shift+F3 on ``window``."""

    def __init__(self, window: QWidget, view: ChatView, home: QWidget) -> None:
        super().__init__(window)
        self.view = view
        self.bar = FindBar()
        self._home = home  # the message box: the keyboard goes back there when the bar closes
        self.matches: list[Match] = []
        self.current = -1
        self._marks = LabelMarks()
        self._current_label: TextLabel | None = None  # the label marked with the current match
        field = self.bar.field
        field.textChanged.connect(lambda _text: self.search())
        field.next_requested.connect(lambda: self.step(1))
        field.previous_requested.connect(lambda: self.step(-1))
        field.close_requested.connect(self.close)
        shortcut(window, FIND, self.open)
        shortcut(window, FIND_NEXT, lambda: self.step(1))
        shortcut(window, FIND_PREVIOUS, lambda: self.step(-1))

    @property
    def query(self) -> str:
        return self.bar.field.text()

    def _texts(self) -> list[str]:
        return [*self.view.earlier_texts, *(w.text for w in self.view.messages)]

    def _count(self) -> None:
        query = self.query
        self.matches = [(i, n) for i, text in enumerate(self._texts()) for n in range(count_matches(text, query))]

    def search(self) -> None:
        """The bar's text changed: count its matches, mark those shown, go to the first in sight
        (the first among the messages shown, the earlier ones counted but left where they are)."""
        self._marks.unmark_all()
        self._current_label = None
        self._count()
        earlier = len(self.view.earlier_texts)
        shown = [i for i, (message, _n) in enumerate(self.matches) if message >= earlier]
        self.current = -1
        if self.matches:
            self._mark_shown()
            self.go(shown[0] if shown else 0)
        self.bar.show_count(self.current, len(self.matches))

    def open(self) -> None:
        """Ctrl+F: the bar, its text selected; the matches of a text still there found again."""
        reopened = not self.bar.isVisible() and bool(self.query)
        self.bar.open()
        if reopened:
            self.search()

    def step(self, by: int) -> None:
        """The next (``by`` 1) or previous (-1) match, round the end; the bar opens if closed."""
        if not self.bar.isVisible():
            self.open()
        at = self.matches[self.current] if 0 <= self.current < len(self.matches) else None
        self._count()  # an answer may have come since, or messages rendered (lazy_render.py)
        self._mark_shown()
        if not self.matches:
            self.bar.show_count(-1, 0)
            return
        here = self.matches.index(at) if at in self.matches else -1
        self.go((here + by) % len(self.matches) if here >= 0 else 0)

    def close(self) -> None:
        self._marks.unmark_all()
        self._current_label = None
        self.matches, self.current = [], -1
        self.bar.hide()
        self._home.setFocus(Qt.FocusReason.OtherFocusReason)

    def _labels(self, widget: MessageWidget) -> list[tuple[RichText, TextLabel]]:
        """The labels that show ``widget``'s text, in order: its thinking (when it has some), its answer."""
        parts = [widget.content.reasoning_text] if widget.content.sections.has_reasoning else []
        parts.append(widget.content.answer_text)
        return [(part, label) for part in parts for label in part.labels() if not label.isHidden()]

    def _mark_shown(self) -> None:
        for widget in self.view.messages:
            if not widget.pending and count_matches(widget.text, self.query):
                for _part, label in self._labels(widget):
                    if count_in(label, self.query):
                        self._marks.mark(label, self.query)

    def go(self, index: int) -> None:
        """Make the ``index``-th match the current one: shown, marked, scrolled to."""
        self.current = index
        self.bar.show_count(index, len(self.matches))
        message, n = self.matches[index]
        while message < len(self.view.earlier_texts):
            self.view.show_earlier()
            self._mark_shown()
        widget = self.view.messages[message - len(self.view.earlier_texts)]
        if widget.pending:
            widget.render_text()
            self.view.lay_out()
            self._mark_shown()
        seen = 0
        for part, label in self._labels(widget):
            found = count_in(label, self.query)
            if n < seen + found:
                self._show_match(widget, part, label, n - seen)
                return
            seen += found
        self._show_whole_text(widget, n)

    def _show_match(self, widget: MessageWidget, part: RichText, label: TextLabel, n: int) -> None:
        if part is widget.content.reasoning_text and not widget.content.toggle.isChecked():
            widget.content.toggle.setChecked(True)  # the match is in the folded thinking
        last = self._current_label
        if last is not None and last is not label and isValid(last):
            self._marks.mark(last, self.query)  # no longer the current one
        self._marks.mark(label, self.query, n)
        self._current_label = label
        self.view.lay_out()
        inner = self.view.widget()
        assert inner is not None  # the transcript's messages' widget, set once built
        at = label.mapTo(inner, QPoint(0, match_y(label, self.query, n)))
        self.view.ensureVisible(at.x(), at.y(), 0, self.view.viewport().height() // 3)

    def _show_whole_text(self, widget: MessageWidget, n: int) -> None:
        """The match lies past what the message renders: its whole text, the match selected."""
        part = widget.content.answer_text
        source = part.source()
        self.view.ensureWidgetVisible(widget)
        if part.cut.at >= len(source):
            return  # all of it is rendered: the match is in markup not shown (a link's address)
        part.more.open_text()
        dialog = part.more.dialog
        at = nth_position(widget.text, self.query, n) - (len(widget.text) - len(source))
        if dialog is None or at < 0:
            return
        cursor = dialog.view.textCursor()
        cursor.setPosition(at)
        cursor.setPosition(at + len(self.query), QTextCursor.MoveMode.KeepAnchor)
        dialog.view.setTextCursor(cursor)
        dialog.view.centerCursor()
