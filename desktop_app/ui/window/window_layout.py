"""Where the main window's parts go, and the speed panel's fold.

The window fits an 800x600 screen: the model bar wraps (ui/widgets/flow_layout.py), the speed panel
scrolls when short and folds away (a toggle, remembered; folded by default on a narrow screen). A
narrow window keeps the transcript readable (:class:`ColumnSplitter`): the conversation list and the
speed panel narrow first, then the panel folds until the window is wide enough again.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QMainWindow,
    QScrollArea,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.store import Settings
from desktop_app.ui.window.shortcuts import SPEED_PANEL, bind

NARROW_SCREEN = 1100  # px of available width below which the speed panel starts folded ("auto")
MIN_CHAT = 420  # px the chat column keeps while the window narrows: ~55 characters and a code block's lines
LIST_FLOOR = 150  # px the conversation list narrows to, at most, for the chat column


class ColumnSplitter(QSplitter):
    """The conversation list, the chat column and the speed panel side by side. As the window
    narrows, the chat column keeps :data:`MIN_CHAT` px: the list gives up its width first (down to
    :data:`LIST_FLOOR`), then the panel (down to its minimum); past that the panel is folded, and
    shown again once the window is wide enough for it (unless the user folded it meanwhile)."""

    def __init__(self, conversations: QWidget, chat: QWidget, side: QWidget) -> None:
        super().__init__(Qt.Orientation.Horizontal)
        self.folded_for_room = False  # the panel was folded by a narrow window, not by the user
        self._list, self._side = conversations, side
        for widget in (conversations, chat, side):
            self.addWidget(widget)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self.fold_for_room()
        self.keep_chat_width()

    def _floors(self) -> tuple[int, int]:
        """The narrowest the list and the panel are made for the chat column."""
        side = self._side.minimumWidth() or self._side.minimumSizeHint().width()
        return max(LIST_FLOOR, self._list.minimumSizeHint().width()), side

    def fold_for_room(self) -> None:
        """Fold the panel when the chat column would be narrower than MIN_CHAT beside it; show it
        again when there is room, if this folded it."""
        list_floor, side_floor = self._floors()
        room = self.width() - 2 * self.handleWidth() - list_floor - MIN_CHAT  # what the panel may take
        if self._side.isHidden() and self.folded_for_room and room >= side_floor:
            self.folded_for_room = False
            self._side.show()
        elif not self._side.isHidden() and room < side_floor:
            self._side.hide()
            self.folded_for_room = True

    def keep_chat_width(self) -> None:
        """Narrow the list, then the panel, down to their floors, for the chat column."""
        list_floor, side_floor = self._floors()
        sizes = self.sizes()
        need = MIN_CHAT - sizes[1]
        for index, floor in ((0, list_floor), (2, side_floor)):
            give = max(0, min(need, sizes[index] - floor))
            sizes[index] -= give
            sizes[1] += give
            need -= give
        if sizes != self.sizes():
            self.setSizes(sizes)


def lay_out(
    window: QMainWindow,
    top: QWidget,
    corner: QWidget,
    banners: list[QWidget],
    chat: QWidget,
    above_input: list[QWidget],
    message_input: QWidget,
    buttons: list[QWidget],
    below_input: list[QWidget],
    conversations: QWidget,
    side: QWidget,
) -> None:
    """Place the parts: ``top`` (the model bar) with ``corner`` at its right, then the
    conversations, the chat column and ``side`` side by side."""
    centre = QWidget()
    column = QVBoxLayout(centre)
    column.setContentsMargins(0, 0, 0, 0)
    for banner in banners:
        column.addWidget(banner)
    column.addWidget(chat, 1)
    for widget in above_input:
        column.addWidget(widget)
    row = QHBoxLayout()
    row.addWidget(message_input, 1)
    stack = QVBoxLayout()
    for button in buttons:
        stack.addWidget(button)
    row.addLayout(stack)
    column.addLayout(row)
    for widget in below_input:
        column.addWidget(widget)
    splitter = ColumnSplitter(conversations, centre, side)
    splitter.setObjectName("mainSplitter")
    splitter.setStretchFactor(1, 1)
    splitter.setCollapsible(1, False)
    splitter.setSizes([220, 760, 280])
    root = QWidget()
    layout = QVBoxLayout(root)
    layout.setContentsMargins(4, 4, 4, 0)
    header = QHBoxLayout()
    header.addWidget(top, 1)
    header.addWidget(corner, 0, Qt.AlignmentFlag.AlignTop)
    layout.addLayout(header)
    layout.addWidget(splitter, 1)
    window.setCentralWidget(root)
    for first, second in zip(buttons, buttons[1:], strict=False):
        window.setTabOrder(first, second)
    if buttons:
        window.setTabOrder(message_input, buttons[0])


class SidePanelFold(QObject):
    """Shows or folds the speed panel: ``area`` holds it (and scrolls it on a short screen),
    ``button`` and ``action`` (F9) toggle it; the choice is saved in the "side_panel" setting
    ("auto": folded on a narrow screen). A window too narrow for it folds it for a while
    (:class:`ColumnSplitter`): the button shows that, and the setting stays."""

    def __init__(self, window: QWidget, panel: QWidget, settings: Settings, save: Callable[[], None]) -> None:
        super().__init__(window)
        self.area = QScrollArea()
        self.area.setObjectName("sidePanelArea")
        self.area.setWidget(panel)
        self.area.setWidgetResizable(True)
        self.area.setFrameShape(QFrame.Shape.NoFrame)
        self.area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.area.setMinimumWidth(panel.minimumSizeHint().width() + self.area.verticalScrollBar().sizeHint().width())
        self._panel = self.area
        self._settings = settings
        self._save = save
        self.action = QAction("Speed panel", window)
        self.action.setObjectName("toggleSidePanel")
        self.action.setCheckable(True)
        bind(self.action, SPEED_PANEL)
        self.action.setToolTip(f"{SPEED_PANEL.does} ({SPEED_PANEL.keys[0]})")
        window.addAction(self.action)
        self.button = QToolButton()
        self.button.setObjectName("sidePanelButton")
        self.button.setDefaultAction(self.action)
        self.button.setAccessibleName("Show or hide the speed panel")
        choice = settings["side_panel"]
        screen = window.screen().availableGeometry().width()
        shown = choice == "shown" or (choice == "auto" and screen >= NARROW_SCREEN)
        self.action.setChecked(shown)
        self._panel.setVisible(shown)
        self.action.toggled.connect(self._toggled)
        self.area.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if watched is self.area and event.type() in (QEvent.Type.Show, QEvent.Type.Hide):
            shown = not self.area.isHidden()
            if shown != self.action.isChecked():  # folded or shown again for room: the setting stays
                self.action.blockSignals(True)
                self.action.setChecked(shown)
                self.action.blockSignals(False)
        return False

    def _toggled(self, shown: bool) -> None:
        splitter = self.area.parentWidget()
        if isinstance(splitter, ColumnSplitter):
            splitter.folded_for_room = False  # the user's choice, from now on
        self._panel.setVisible(shown)
        self._settings.set("side_panel", "shown" if shown else "hidden")
        self._save()
        if shown and isinstance(splitter, ColumnSplitter):
            splitter.keep_chat_width()
