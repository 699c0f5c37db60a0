"""The main window stays on its screen: a saved geometry is restored only when it fits, and the
window is pulled back inside the screen's available area whenever a resize takes it past it (a
long model name, a wrapped model bar)."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QEvent, QObject, QRect, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget


def available_area(window: QWidget) -> QRect:
    """The part of the window's screen (the primary one before it is shown) not taken by panels."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry()


def fits(frame: QRect, area: QRect) -> bool:
    return area.contains(frame)


class ScreenFit(QObject):
    """Restores ``window``'s saved geometry when it fits a screen (else ``default_size``, shrunk
    to the screen and centred), and keeps the window inside the screen after every resize."""

    def __init__(self, window: QWidget, default_size: tuple[int, int]) -> None:
        super().__init__(window)
        self._window = window
        self._default = default_size
        self._pending = False
        window.installEventFilter(self)

    def restore(self, saved: str) -> None:
        window = self._window
        if saved and window.restoreGeometry(QByteArray.fromBase64(saved.encode("ascii"))):
            frame = window.frameGeometry()
            screen = QGuiApplication.screenAt(frame.center())
            if screen is not None and fits(frame, screen.availableGeometry()):
                return
        area = available_area(window)
        width, height = min(self._default[0], area.width()), min(self._default[1], area.height())
        window.resize(width, height)
        window.move(area.x() + (area.width() - width) // 2, area.y() + (area.height() - height) // 2)
        self.fit()

    def fit(self) -> None:
        """Shrink and move the window (frame included) into its screen's available area."""
        self._pending = False
        window = self._window
        area = available_area(window)
        frame = window.frameGeometry()
        if fits(frame, area):
            return
        extra_w, extra_h = frame.width() - window.width(), frame.height() - window.height()
        width = min(window.width(), area.width() - extra_w)
        height = min(window.height(), area.height() - extra_h)
        if (width, height) != (window.width(), window.height()):
            window.resize(width, height)
        frame = window.frameGeometry()
        x = max(area.left(), min(frame.left(), area.right() + 1 - frame.width()))
        y = max(area.top(), min(frame.top(), area.bottom() + 1 - frame.height()))
        if (x, y) != (frame.left(), frame.top()):
            window.move(x, y)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        # Resizes only: a window the user drags partly off the screen stays where it was put.
        if watched is self._window and event.type() == QEvent.Type.Resize and not self._pending:
            self._pending = True
            QTimer.singleShot(0, self, self.fit)  # after the layout settled
        return False
