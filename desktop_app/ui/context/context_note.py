"""The transcript's note where the model's context begins: "The 2 oldest messages are not in the
model's context", just above the oldest message the model still read for the last answer.

One note per transcript, moved as the conversation grows: it says where the last answer's
prompt began (from its stats' ``dropped_turns``: at once while it is written, and from the
history when the conversation is opened again)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from desktop_app.engine.context_size import RaiseOffer
from desktop_app.ui.context.context_meter import LEVEL_COLOURS, left_out, raise_text
from desktop_app.ui.transcript.chat_view import ChatView, MessageWidget
from desktop_app.ui.widgets.plain_text import plain_tip


def first_seen(view: ChatView, answer: MessageWidget, kept: int) -> MessageWidget | None:
    """The oldest message the model read for ``answer``: its prompt kept the ``kept`` newest
    messages before it (empty answers are never sent, so they are not counted). When that
    message is among the earlier ones not shown yet, the oldest one shown."""
    if answer not in view.messages or kept <= 0:
        return None
    before = view.messages[: view.messages.index(answer)]
    seen = 0
    for widget in reversed(before):
        if widget.role == "assistant" and not widget.text:
            continue
        seen += 1
        if seen == kept:
            return widget
    return before[0] if before and view.earlier_count else None


class ContextNote(QFrame):
    """Signals:
    raise_requested(int): the user clicked "Raise the context to N": N.
    """

    raise_requested = Signal(int)

    def __init__(self, view: ChatView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self.setObjectName("contextNote")
        self.setFrameShape(QFrame.Shape.NoFrame)
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 0, 10, 0)
        self.label = QLabel()
        self.label.setObjectName("contextNoteText")
        self.label.setStyleSheet(f"color: {LEVEL_COLOURS['over'].name()}; font-style: italic;")
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.raise_button = QPushButton()
        self.raise_button.setObjectName("raiseContextNote")
        self.raise_button.setFlat(True)
        self.raise_button.setForegroundRole(QPalette.ColorRole.Link)
        self.raise_button.clicked.connect(self._raise)
        row.addWidget(self.label, 1)
        row.addWidget(self.raise_button)
        self.offer: RaiseOffer | None = None
        self.dropped = 0
        self.above: MessageWidget | None = None  # the message the note stands above
        self._place: tuple[MessageWidget, int] | None = None  # the answer and how many messages it kept
        self.hide()
        view.earlier_button.clicked.connect(self._replace)  # after the view shows the earlier messages

    def show_for(self, answer: MessageWidget, dropped: int, kept: int) -> None:
        """``answer``'s prompt left out the ``dropped`` oldest messages and kept ``kept`` (0: hide)."""
        self.dropped = dropped
        self._place = (answer, kept) if dropped > 0 else None
        self._replace()

    def clear(self) -> None:
        self._place = None
        self._replace()

    def show_offer(self, offer: RaiseOffer | None) -> None:
        self.offer = offer
        self.raise_button.setVisible(offer is not None)
        if offer is not None:
            self.raise_button.setText(raise_text(offer))
            self.raise_button.setToolTip(plain_tip(offer.explanation))

    def _raise(self) -> None:
        if self.offer is not None:
            self.raise_requested.emit(self.offer.n_ctx)

    def _replace(self) -> None:
        above = first_seen(self.view, *self._place) if self._place is not None else None
        self.above = above
        if above is None:
            self.hide()
            return
        self.label.setText(f"{left_out(self.dropped)} not in the model's context")
        self.setToolTip(
            "The conversation is longer than the model's context: the model did not read the messages "
            "above this line when it wrote the last answer. Raise the context or start a new conversation "
            "to have it read them."
        )
        self.view.insert_note(self, above)
        above.destroyed.connect(self._forget)  # a bound slot: disconnected when the note goes first
        self.show()

    def _forget(self) -> None:
        """A message the note stood above went (edited away, another conversation opened)."""
        if self.above is not None and self.above not in self.view.messages:
            self.above = None
            self.hide()
