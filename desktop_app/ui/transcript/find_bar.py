"""The find bar over the transcript (Ctrl+F): a text field, "3 of 12", previous and next, close.

Enter goes to the next match, Shift+Enter to the previous, Esc closes it (the window's Esc stops
an answer: the field takes Esc, Enter and Shift+Enter before any shortcut does)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from desktop_app.ui.widgets.focus_ring import ring_on_focus

_OWN_KEYS = (Qt.Key.Key_Escape, Qt.Key.Key_Return, Qt.Key.Key_Enter)


class FindField(QLineEdit):
    """The search text. Signals: next_requested(), previous_requested(), close_requested()."""

    next_requested = Signal()
    previous_requested = Signal()
    close_requested = Signal()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent) and event.key() in _OWN_KEYS:
            event.accept()  # ours, not the window's Esc (stop the answer)
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        if event.key() == Qt.Key.Key_Escape:
            self.close_requested.emit()
        elif event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            back = event.modifiers() & Qt.KeyboardModifier.ShiftModifier
            (self.previous_requested if back else self.next_requested).emit()
        else:
            super().keyPressEvent(event)


class FindBar(QFrame):
    """Hidden until :meth:`open`. ``field`` says what to find (its signals: the bar's), ``count``
    where the current match is ("3 of 12", "No matches")."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("findBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 3, 6, 3)
        self.field = FindField()
        self.field.setObjectName("findField")
        self.field.setAccessibleName("Find in the conversation")
        self.field.setPlaceholderText("Find in the conversation")
        self.field.setClearButtonEnabled(True)
        self.count = QLabel()
        self.count.setObjectName("findCount")
        self.count.setTextFormat(Qt.TextFormat.PlainText)
        self.previous = self._button("findPrevious", Qt.ArrowType.UpArrow, "Previous match (Shift+Enter, Shift+F3)")
        self.next = self._button("findNext", Qt.ArrowType.DownArrow, "Next match (Enter, F3)")
        self.close_button = self._button("findClose", Qt.ArrowType.NoArrow, "Close the find bar (Esc)")
        self.close_button.setText("✕")
        self.previous.clicked.connect(self.field.previous_requested)
        self.next.clicked.connect(self.field.next_requested)
        self.close_button.clicked.connect(self.field.close_requested)
        layout.addWidget(self.field, 1)
        layout.addWidget(self.count)
        for button in (self.previous, self.next, self.close_button):
            layout.addWidget(button)
        self.hide()

    def _button(self, name: str, arrow: Qt.ArrowType, tip: str) -> QToolButton:
        button = QToolButton()
        button.setObjectName(name)
        button.setArrowType(arrow)
        button.setAutoRaise(True)
        button.setToolTip(tip)
        button.setAccessibleName(tip.split(" (")[0])
        ring_on_focus(button)
        return button

    def open(self) -> None:
        """Show the bar with the keyboard in its field, its text selected (to type anew)."""
        self.show()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()

    def show_count(self, current: int, total: int) -> None:
        """ "3 of 12" (``current`` from 0; -1: none chosen), "No matches", or nothing without a query."""
        if not self.field.text():
            self.count.clear()
        elif total == 0:
            self.count.setText("No matches")
        else:
            self.count.setText(f"{current + 1} of {total}" if current >= 0 else f"{total} matches")
        self.count.setAccessibleName(self.count.text())
