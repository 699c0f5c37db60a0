"""A label that elides its text ("Loading a-very-long-na…") instead of widening the window."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


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
