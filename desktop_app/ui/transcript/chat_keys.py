"""The chat's keys on the window: Esc stops the answer, Ctrl+N starts a new conversation, and keys
act on the last messages, so that the keyboard needs no walk through the transcript's buttons (Tab
reaches only the last messages' buttons: MessageWidget.set_reachable): copy the last answer,
regenerate it, continue it, edit and resend your last message."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QPushButton, QWidget

from desktop_app.ui.transcript.chat_view import ChatView
from desktop_app.ui.transcript.message_actions import actions_of
from desktop_app.ui.window.shortcuts import CONTINUE, COPY_ANSWER, EDIT_LAST, NEW_CHAT, REGENERATE, STOP, shortcut


class ChatKeys(QObject):
    """Esc (``stop``), Ctrl+N (``new``), Ctrl+Shift+C, Ctrl+R, Ctrl+Shift+Return and Ctrl+E on
    ``window``, the last four acting as the last messages' buttons do."""

    def __init__(self, window: QWidget, view: ChatView, stop: Callable[[], object], new: Callable[[], object]) -> None:
        super().__init__(window)
        self._view = view
        shortcut(window, STOP, stop)
        shortcut(window, NEW_CHAT, new)
        shortcut(window, COPY_ANSWER, lambda: self._press("assistant", copy=True))
        shortcut(window, REGENERATE, lambda: self._press("assistant"))
        shortcut(window, CONTINUE, self._continue)
        shortcut(window, EDIT_LAST, lambda: self._press("user"))

    def _press(self, role: str, copy: bool = False) -> None:
        """Click the last ``role`` message's Copy (``copy``) or its own action, when enabled."""
        last = next((w for w in reversed(self._view.messages) if w.role == role), None)
        if last is None:
            return
        button: QPushButton = last.copy_button if copy else last.action_button
        if button.isEnabled():
            button.click()

    def _continue(self) -> None:
        """Click the last answer's Continue, when it shows (the answer stopped before its end)."""
        last = self._view.messages[-1] if self._view.messages else None
        button = actions_of(last).continue_button if last is not None else None
        if button is not None and button.isVisible() and button.isEnabled():
            button.click()
