"""A message's further actions, in its row after Copy and Regenerate / Edit & resend: on the last
answer, *Continue* (shown when it stopped for its length or was stopped) and *Edit*; on every
message, *Branch* (a new conversation with the messages up to it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QPushButton

from desktop_app.engine.api import FinishReason
from desktop_app.ui.transcript.message_widget import MessageWidget
from desktop_app.ui.widgets.focus_ring import ring_on_focus

# Why an answer ended, when the model has more to say: its length ran out, or the user stopped it.
CONTINUABLE = frozenset({FinishReason.LENGTH, FinishReason.CANCELLED})


def can_continue(stats: dict[str, Any] | None) -> bool:
    """The answer with these stats ended before the model ended it (Continue goes on with it)."""
    return bool(stats) and (stats or {}).get("finish_reason") in CONTINUABLE


class MessageActions(QObject):
    """Continue, Edit (an answer's) and Branch on ``widget`` (a child of it: :func:`actions_of`).

    Signals:
        continue_requested(): go on with this answer where it ended.
        edit_requested(): edit this answer's text.
        branch_requested(): a new conversation with the messages up to this one.
    """

    continue_requested = Signal()
    edit_requested = Signal()
    branch_requested = Signal()

    def __init__(self, widget: MessageWidget) -> None:
        super().__init__(widget)
        self.widget = widget
        answer = widget.role == "assistant"
        self.continue_button = (
            self._button("Continue", "Continue this answer where it ended", self.continue_requested.emit)
            if answer
            else None
        )
        self.edit_button = self._button("Edit", "Edit this answer", self.edit_requested.emit) if answer else None
        self.branch_button = self._button(
            "Branch", "Branch from here: a new conversation with the messages up to this one", self.branch_requested.emit
        )  # fmt: skip
        self.branch_button.setToolTip(self.branch_button.accessibleName())
        if self.continue_button is not None:
            self.continue_button.hide()

    def _button(self, text: str, name: str, slot: Callable[[], object]) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(f"{text.lower()}Button")
        button.setFlat(True)
        ring_on_focus(button)
        button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        button.setAccessibleName(name)
        button.clicked.connect(lambda: slot())
        self.widget.action_row.addWidget(button)
        return button

    @property
    def buttons(self) -> list[QPushButton]:
        return [b for b in (self.continue_button, self.edit_button, self.branch_button) if b is not None]

    def refresh(self, last: bool, newest: bool, streaming: bool) -> None:
        """``last``: the last message of its role (its actions are on); ``newest``: the last message
        of the conversation (an answer there may be continued); ``streaming``: an answer runs."""
        if self.continue_button is not None:
            self.continue_button.setVisible(newest and not streaming and can_continue(self.widget.stats))
        if self.edit_button is not None:
            self.edit_button.setEnabled(last and not streaming)
        self.branch_button.setEnabled(not streaming)
        for button in self.buttons:  # Tab reaches the last messages' buttons only (MessageWidget.set_reachable)
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus if last else Qt.FocusPolicy.NoFocus)


def actions_of(widget: MessageWidget) -> MessageActions:
    """The further actions of a message shown in the transcript (ChatView makes them)."""
    actions = widget.findChild(MessageActions)
    assert actions is not None, "a message widget made outside the transcript"
    return actions
