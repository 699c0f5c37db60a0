"""The transcript's column of messages, at most a readable measure wide and centred in a wide
window, as chat apps do: lines of about :data:`READABLE_CHARS` characters, not 180 across a
1920 px screen. A message wider than that (a long code line or a wide table) widens the column
up to the transcript's width, and past it the transcript scrolls sideways as before."""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QVBoxLayout, QWidget

READABLE_CHARS = 90  # the text column's measure, in the font's average characters
MESSAGE_PADDING = 24  # a message's frame and margins around its text (ui/transcript/message_widget.py)


class ReadableColumn(QVBoxLayout):
    """A vertical layout whose items take at most the readable measure of its widget's font,
    centred in the width it is given; its height for a width is the column's."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)

    def measure(self) -> int:
        """The widest the column's items grow (px): the readable measure, or the widest item's minimum."""
        parent = self.parentWidget()
        readable = (
            READABLE_CHARS * parent.fontMetrics().averageCharWidth() + MESSAGE_PADDING if parent is not None else 0
        )
        margins = self.contentsMargins()
        return max(readable, self.minimumSize().width() - margins.left() - margins.right())

    def _spare(self, width: int) -> int:
        """How much of ``width`` (the layout's, margins included) lies beside the column."""
        margins = self.contentsMargins()
        return max(0, width - margins.left() - margins.right() - self.measure())

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 - Qt API
        spare = self._spare(rect.width())
        super().setGeometry(rect.adjusted(spare // 2, 0, -(spare - spare // 2), 0))

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt API
        return super().heightForWidth(width - self._spare(width))
