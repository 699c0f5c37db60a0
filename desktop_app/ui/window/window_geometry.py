"""The main window stays on its screen: the first window is sized to the screen's available area
less its title bar and borders, a saved geometry is restored and pulled inside the screen, and
the window is pulled back inside the screen's available area once it is shown (when the window
system adds its frame) and whenever a resize takes it past it (a long model name, a wrapped
model bar)."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QEvent, QObject, QRect, QSize, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

from desktop_app.ui.window.window_placement import DECORATION

# after the first show, when the window system reports the frame (X11 window managers: a moment later)
SETTLED_MS = 300


def available_area(window: QWidget) -> QRect:
    """The part of the window's screen (the primary one before it is shown) not taken by panels."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry()


def fits(frame: QRect, area: QRect) -> bool:
    return area.contains(frame)


def decoration_of(window: QWidget) -> QSize:
    """The window's title bar and borders (assumed DECORATION until the window system reports them)."""
    extra = window.frameGeometry().size() - window.geometry().size()
    return extra if extra.width() > 0 or extra.height() > 0 else DECORATION


def first_geometry(area: QRect, preferred: tuple[int, int], decoration: QSize) -> QRect:
    """The window's own rectangle (frame left out) at its first start: ``preferred`` shrunk so
    that it fits ``area`` with its ``decoration`` (title bar, borders), centred; its top left
    is where the frame's top left goes (what QWidget.move takes)."""
    width = min(preferred[0], area.width() - decoration.width())
    height = min(preferred[1], area.height() - decoration.height())
    frame = QRect(0, 0, width + decoration.width(), height + decoration.height())
    frame.moveCenter(area.center())
    frame.moveLeft(max(area.left(), frame.left()))
    frame.moveTop(max(area.top(), frame.top()))
    return QRect(frame.topLeft(), QSize(width, height))


class ScreenFit(QObject):
    """Restores ``window``'s saved geometry, pulled inside its screen (none saved:
    ``default_size``, shrunk to the screen with its frame and centred), and keeps the window
    inside the screen once shown and after every resize."""

    def __init__(self, window: QWidget, default_size: tuple[int, int]) -> None:
        super().__init__(window)
        self._window = window
        self._default = default_size
        self._pending = False
        self._shown = False
        self._first = False  # placed by first_geometry, its frame assumed: placed again once known
        window.installEventFilter(self)

    def restore(self, saved: str) -> None:
        window = self._window
        if saved and window.restoreGeometry(QByteArray.fromBase64(saved.encode("ascii"))):
            self.fit()  # saved on a larger screen, or another one: pulled inside this one
            return
        self._first = True
        self._place()

    def _place(self) -> None:
        window = self._window
        place = first_geometry(available_area(window), self._default, decoration_of(window))
        window.resize(place.size())
        window.move(place.topLeft())
        self.fit()

    def _settled(self) -> None:
        """Shown a moment ago: a first window placed again with its real frame (the one assumed
        may be larger: the screen's edge left unused), any window pulled inside the screen."""
        if self._first and decoration_of(self._window) != DECORATION:
            self._first = False
            self._place()
        else:
            self.fit()

    def fit(self) -> None:
        """Shrink and move the window (frame included) into its screen's available area."""
        self._pending = False
        window = self._window
        area = available_area(window)
        frame = window.frameGeometry()
        if fits(frame, area):
            return
        extra_w, extra_h = frame.width() - window.width(), frame.height() - window.height()  # as reported
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
        if watched is self._window and event.type() == QEvent.Type.Show and not self._shown:
            self._shown = True  # its frame is added now or a moment later: its status bar kept in sight
            QTimer.singleShot(0, self, self.fit)
            QTimer.singleShot(SETTLED_MS, self, self._settled)
        return False
