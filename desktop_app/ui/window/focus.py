"""Where the keyboard goes: the message box, unless the user put it elsewhere.

- At start, the message box has the focus.
- When the focused widget is disabled or hidden (a picker while a model loads, the race button
  while racing), Qt hands the focus to the next widget in the tab chain (a GPU-layers box, "Draft
  k"), where the next key typed changes a setting: the message box takes it instead.
- The same when that happens while the window is in the background (a model chosen in the
  library window): the window's focus, given back when it comes to the front, is the message box.
- When the window gets the keyboard back (a dialog or message box closed, the user came back from
  another application) and its focus is nowhere useful, the message box takes it.
- Spin boxes and combo boxes take the focus from a click or Tab only, and ignore the mouse wheel
  unless focused, so scrolling past them changes nothing.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Slot
from PySide6.QtGui import QWindow
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)
from shiboken6 import isValid

_WATCHED = "specchatFocusWatched"  # set on a dialog's QWindow once its closing is watched


def useful(widget: QWidget | None) -> bool:
    """Whether the focus in ``widget`` is worth keeping: a field the user types text in, or a
    list they move through (not a button, a spin box or a combo box)."""
    if widget is None or not widget.isEnabled() or not widget.isVisible():
        return False
    if isinstance(widget, QLineEdit):
        return not isinstance(widget.parentWidget(), (QAbstractSpinBox, QComboBox))
    if isinstance(widget, (QPlainTextEdit, QTextEdit)):
        return not widget.isReadOnly()
    return isinstance(widget, QAbstractItemView)


class FocusKeeper(QObject):
    """Keeps the keyboard of ``window`` in ``home`` (the message box) when it would stray."""

    def __init__(self, window: QWidget, home: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._home = home
        self._away: Qt.WindowType | None = None  # the kind of window that had the keyboard last
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.focusChanged.connect(self._focus_changed)
        app.focusWindowChanged.connect(self._window_focused)
        for box in [*window.findChildren(QAbstractSpinBox), *window.findChildren(QComboBox)]:
            box.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # not WheelFocus: scrolling never focuses
            box.installEventFilter(self)
        home.setFocus(Qt.FocusReason.OtherFocusReason)

    def go_home(self) -> None:
        if self._home.isEnabled() and self._home.isVisible():
            self._home.setFocus(Qt.FocusReason.OtherFocusReason)

    @Slot(QWidget, QWidget)
    def _focus_changed(self, old: QWidget | None, new: QWidget | None) -> None:
        if old is None or not isValid(self._window) or not self._window.isAncestorOf(old):
            return  # (the window may be half-destroyed: it clears its focus while being deleted)
        if not old.isEnabled() or not old.isVisible():  # Qt moved the focus on, the user did not
            QTimer.singleShot(0, self, self.go_home)

    @Slot(QWindow)
    def _window_focused(self, focused: QWindow | None) -> None:
        if not isValid(self._window):
            return
        mine = self._window.windowHandle()
        if focused is None or focused is not mine:
            self._away = focused.type() if focused is not None else None
            if focused is not None and focused.transientParent() is mine and not focused.property(_WATCHED):
                focused.setProperty(_WATCHED, True)  # one of our dialogs: see when it closes
                focused.visibleChanged.connect(self._dialog_shown_or_hidden)
            return
        if self._away not in (Qt.WindowType.Popup, Qt.WindowType.ToolTip):  # not a combo box's list
            QTimer.singleShot(0, self, self._home_unless_useful)

    @Slot(bool)
    def _dialog_shown_or_hidden(self, visible: bool) -> None:
        if not visible:
            QTimer.singleShot(0, self, self._back_from_dialog)

    def _back_from_dialog(self) -> None:
        """A dialog of ours closed: the window gets the keyboard back (a window manager does
        that; without one nothing would be active)."""
        if isValid(self._window) and self._window.isVisible() and QApplication.activeWindow() is None:
            self._window.activateWindow()

    def _home_unless_useful(self) -> None:
        if QApplication.activeWindow() is self._window and not useful(self._window.focusWidget()):
            self.go_home()

    def _home_if_moved_away(self) -> None:
        """A box was disabled while the window was in the background (a model chosen in the
        library, a file dialog just closed): Qt gave the window's focus to the next widget of
        the tab chain, a GPU-layers box, which nothing reports; the message box takes it back."""
        if isValid(self._window) and not self._window.isActiveWindow() and not useful(self._window.focusWidget()):
            self.go_home()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Wheel and isinstance(watched, QWidget) and not watched.hasFocus():
            event.ignore()
            return True  # the value stays
        if event.type() == QEvent.Type.EnabledChange and isinstance(watched, QWidget) and not watched.isEnabled():
            QTimer.singleShot(0, self, self._home_if_moved_away)
        return False
