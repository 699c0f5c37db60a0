"""A label and a button that elide their text ("Loading a-very-long-na…") instead of widening the window."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QPushButton, QSizePolicy, QStyle, QStyleOptionButton, QStylePainter, QWidget


class ElidedLabel(QLabel):
    """A one-line label that shows "Loading a-very-long-na…" when narrow: it never asks for
    more than ``min_chars`` characters of width."""

    def __init__(self, text: str = "", min_chars: int = 8, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self._min_chars = min_chars
        self.setTextFormat(Qt.TextFormat.PlainText)  # model names, file names: as written
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        hint = super().minimumSizeHint()
        width = self.fontMetrics().averageCharWidth() * self._min_chars
        return QSize(min(hint.width(), width), hint.height())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        painter = QPainter(self)
        rect = self.contentsRect()
        text = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, rect.width())
        self.style().drawItemText(
            painter, rect, int(self.alignment()), self.palette(), self.isEnabled(), text, self.foregroundRole()
        )


class ElidedButton(QPushButton):
    """A push button whose text elides ("Race: without specula…") when narrow, instead of asking
    for its whole text's width: it never asks for more than ``min_chars`` characters."""

    def __init__(self, text: str = "", min_chars: int = 12, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self._min_chars = min_chars
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)  # may shrink below its text

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        hint = super().minimumSizeHint()
        whole = super().sizeHint()
        room = whole.width() - self.fontMetrics().horizontalAdvance(self.text())  # the frame and margins
        width = room + self.fontMetrics().averageCharWidth() * self._min_chars
        return QSize(min(hint.width(), width), hint.height())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        option = QStyleOptionButton()
        self.initStyleOption(option)
        whole = super().sizeHint().width()
        if self.width() < whole:  # the whole text does not fit: as much as fits, then "…"
            room = self.width() - (whole - self.fontMetrics().horizontalAdvance(self.text()))
            option.text = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, max(room, 0))
        QStylePainter(self).drawControl(QStyle.ControlElement.CE_PushButton, option)
