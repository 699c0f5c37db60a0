"""Where the main window's parts go, and the speed panel's fold.

The window fits an 800x600 screen: the model bar wraps (ui/widgets/flow_layout.py), the speed panel
scrolls when short and folds away (a toggle, remembered; folded by default on a narrow screen).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
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
    splitter = QSplitter(Qt.Orientation.Horizontal)
    splitter.setObjectName("mainSplitter")
    splitter.addWidget(conversations)
    splitter.addWidget(centre)
    splitter.addWidget(side)
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
    ("auto": folded on a narrow screen)."""

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

    def _toggled(self, shown: bool) -> None:
        self._panel.setVisible(shown)
        self._settings.set("side_panel", "shown" if shown else "hidden")
        self._save()
