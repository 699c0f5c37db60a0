"""Where a secondary window opens: a sensible size clamped to the screen, centred on its anchor."""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget


def place_near(window: QWidget, anchor: QWidget | None, preferred: tuple[int, int]) -> None:
    """Resize ``window`` to ``preferred`` (no larger than the screen's available area) and centre
    it on ``anchor`` (the screen when None), moved back inside the screen where it would spill."""
    screen = (anchor.screen() if anchor is not None else window.screen()) or QGuiApplication.primaryScreen()
    area = screen.availableGeometry()
    width = min(preferred[0], area.width())
    height = min(preferred[1], area.height())
    window.resize(width, height)
    frame = QRect(0, 0, width, height)
    frame.moveCenter(anchor.frameGeometry().center() if anchor is not None else area.center())
    frame.moveLeft(max(area.left(), min(frame.left(), area.right() + 1 - width)))
    frame.moveTop(max(area.top(), min(frame.top(), area.bottom() + 1 - height)))
    window.move(frame.topLeft())
