"""Where a secondary window opens: a sensible size clamped to the screen, centred on its anchor."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

DECORATION = QSize(16, 40)  # title bar and borders, assumed until the window system reports them


def place_near(window: QWidget, anchor: QWidget | None, preferred: tuple[int, int]) -> None:
    """Resize ``window`` to ``preferred`` (no larger than the screen's available area, its title
    bar and borders included) and centre it on ``anchor`` (the screen when None), moved back
    inside the screen where it would spill over an edge."""
    screen = (anchor.screen() if anchor is not None else window.screen()) or QGuiApplication.primaryScreen()
    area = screen.availableGeometry()
    decoration = window.frameGeometry().size() - window.geometry().size()
    if decoration.isEmpty():
        decoration = DECORATION
    width = min(preferred[0], area.width() - decoration.width())
    height = min(preferred[1], area.height() - decoration.height())
    window.resize(width, height)
    frame = QRect(0, 0, width + decoration.width(), height + decoration.height())
    frame.moveCenter(anchor.frameGeometry().center() if anchor is not None else area.center())
    frame.moveLeft(max(area.left(), min(frame.left(), area.right() + 1 - frame.width())))
    frame.moveTop(max(area.top(), min(frame.top(), area.bottom() + 1 - frame.height())))
    window.move(frame.topLeft())  # a top-level window's position is its frame's
