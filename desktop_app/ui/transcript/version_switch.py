"""``< 2/3 >`` on a message that has versions (an edited question, a regenerated answer)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from desktop_app.store import StoredMessage
from desktop_app.ui.transcript.chat_view import MessageWidget


class VersionSwitch(QWidget):
    """Which version of a message is shown, with buttons to the one before and after.

    Signals:
        step(int): -1 for the version before, +1 for the one after.
    """

    step = Signal(int)

    def __init__(self, version: int, versions: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("versionSwitch")
        self.version, self.versions = version, versions
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        self.previous = self._button(row, "<", "previousVersion", "Previous version", -1)
        self.label = QLabel(f"{version}/{versions}")
        self.label.setObjectName("versionLabel")
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        row.addWidget(self.label)
        self.next = self._button(row, ">", "nextVersion", "Next version", +1)
        self.setToolTip(f"Version {version} of {versions}: every version is kept")
        self.setAccessibleName(f"Version {version} of {versions}")
        self.previous.setEnabled(version > 1)
        self.next.setEnabled(version < versions)

    def _button(self, row: QHBoxLayout, text: str, name: str, accessible: str, step: int) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setObjectName(name)
        button.setAccessibleName(accessible)
        button.setAutoRaise(True)
        button.clicked.connect(lambda: self.step.emit(step))
        row.addWidget(button)
        return button

    def allow(self, enabled: bool) -> None:
        """Off while an answer streams; on, only the buttons that lead somewhere."""
        self.previous.setEnabled(enabled and self.version > 1)
        self.next.setEnabled(enabled and self.version < self.versions)


def attach_switch(widget: MessageWidget, message: StoredMessage) -> VersionSwitch | None:
    """Put ``< 2/3 >`` in a message's action row, before Copy, when it has other versions."""
    if message.versions < 2:
        return None
    switch = VersionSwitch(message.version, message.versions, widget)
    widget.action_row.insertWidget(widget.action_row.indexOf(widget.copy_button), switch)
    return switch
