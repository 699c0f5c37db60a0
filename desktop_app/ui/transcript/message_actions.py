"""A message's further actions, in its row after Copy and Regenerate / Edit & resend: on the last
answer, *Continue* (shown when it stopped for its length or was stopped); and a ``⋯`` menu with
*Edit* (the last answer's) and *Branch from here* (every message: a new conversation with the
messages up to it). The menu keeps the row narrow: the footer beside it keeps its width."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QPushButton, QToolButton

from desktop_app.engine.api import FinishReason
from desktop_app.ui.transcript.message_widget import MessageWidget
from desktop_app.ui.widgets.focus_ring import FLAT_FOCUS_RING, ring_on_focus

# Why an answer ended, when the model has more to say: its length ran out, or the user stopped it.
CONTINUABLE = frozenset({FinishReason.LENGTH, FinishReason.CANCELLED})


def can_continue(stats: dict[str, Any] | None) -> bool:
    """The answer with these stats ended before the model ended it (Continue goes on with it)."""
    return bool(stats) and (stats or {}).get("finish_reason") in CONTINUABLE


class MessageActions(QObject):
    """Continue, and the ``⋯`` menu's Edit (an answer's) and Branch from here, on ``widget`` (a
    child of it: :func:`actions_of`).

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
        self.continue_button: QPushButton | None = None
        if answer:
            self.continue_button = QPushButton("Continue")
            self.continue_button.setObjectName("continueButton")
            self.continue_button.setFlat(True)
            ring_on_focus(self.continue_button)
            self.continue_button.setAccessibleName("Continue this answer where it ended")
            self.continue_button.setToolTip("Go on with this answer where it ended (Ctrl+Shift+Return)")
            self.continue_button.clicked.connect(self.continue_requested.emit)
            self.continue_button.hide()
            widget.action_row.addWidget(self.continue_button)
        self.more_button = QToolButton()
        self.more_button.setObjectName("moreButton")
        self.more_button.setText("⋯")
        self.more_button.setAccessibleName("More actions")
        self.more_button.setToolTip("More: " + ("edit this answer, " if answer else "") + "branch from here")
        self.more_button.setStyleSheet(FLAT_FOCUS_RING + "QToolButton::menu-indicator { image: none; width: 0; }")
        self.more_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.more_button)
        self.edit_action = self._action(menu, "Edit", "editAnswer", self.edit_requested.emit) if answer else None
        self.branch_action = self._action(menu, "Branch from here", "branchFromHere", self.branch_requested.emit)
        self.branch_action.setToolTip("A new conversation with the messages up to this one")
        self.more_button.setMenu(menu)
        widget.action_row.addWidget(self.more_button)
        for button in self.buttons:
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab reaches the last messages' only (refresh)

    @staticmethod
    def _action(menu: QMenu, text: str, name: str, slot: Callable[[], object]) -> QAction:
        action = menu.addAction(text)
        action.setObjectName(name)
        action.triggered.connect(lambda: slot())
        return action

    @property
    def buttons(self) -> list[QPushButton | QToolButton]:
        return [b for b in (self.continue_button, self.more_button) if b is not None]

    def refresh(self, last: bool, newest: bool, streaming: bool) -> None:
        """``last``: the last message of its role (its actions are on); ``newest``: the last message
        of the conversation (an answer there may be continued); ``streaming``: an answer runs."""
        if self.continue_button is not None:
            self.continue_button.setVisible(newest and not streaming and can_continue(self.widget.stats))
        if self.edit_action is not None:
            self.edit_action.setEnabled(last and not streaming)
        self.branch_action.setEnabled(not streaming)
        self.more_button.setEnabled(not streaming)
        for button in self.buttons:  # Tab reaches the last messages' buttons only (MessageWidget.set_reachable)
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus if last else Qt.FocusPolicy.NoFocus)


def actions_of(widget: MessageWidget) -> MessageActions:
    """The further actions of a message shown in the transcript (ChatView makes them)."""
    actions = widget.findChild(MessageActions)
    assert actions is not None, "a message widget made outside the transcript"
    return actions
