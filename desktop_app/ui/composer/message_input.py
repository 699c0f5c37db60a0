"""The message editor: Enter sends, Shift+Enter adds a line, Esc cancels the answer."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QPlainTextEdit, QWidget


class MessageInput(QPlainTextEdit):
    """Signals:
    send_requested(str): Enter was pressed; the text to send.
    cancel_requested(): Esc was pressed.
    """

    send_requested = Signal(str)
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageInput")
        self.setAccessibleName("Message")
        self.setPlaceholderText("Message the model — Enter to send, Shift+Enter for a new line, Esc to stop")
        self.setTabChangesFocus(True)
        self.setMaximumHeight(110)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                self.send_requested.emit(self.toPlainText())
            return
        if key == Qt.Key.Key_Escape:
            self.cancel_requested.emit()
            return
        super().keyPressEvent(event)
