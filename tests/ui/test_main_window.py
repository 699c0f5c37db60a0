"""The main window's own state: it reopens at the size it was closed at."""

from __future__ import annotations

import gc
from typing import Any

from PySide6.QtCore import QSize, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMessageBox

from desktop_app.ui.main_window import DEFAULT_SIZE
from desktop_app.ui.window.window_geometry import first_geometry
from desktop_app.ui.window.window_placement import DECORATION


def first_size(window: Any) -> QSize:
    """The default size fitted to the screen with the window's frame (assumed: offscreen has none)."""
    return first_geometry(window.screen().availableGeometry(), DEFAULT_SIZE, DECORATION).size()


def test_the_window_reopens_at_the_size_it_was_closed_at(qtbot: Any, make_window: Any) -> None:
    window = make_window(wait_loaded=False)
    # As narrow as the window goes and shorter than the default: restoring fits a window into its
    # screen, and the offscreen platform's screen is only 800 px wide.
    smaller = QSize(window.minimumSizeHint().width(), 560)
    default = first_size(window)  # it fits the screen, title bar and borders included
    assert window.size() == default != smaller
    window.resize(smaller)
    qtbot.waitUntil(lambda: window.size() == smaller, timeout=5000)
    window.close()
    assert window.settings["window_geometry"]

    reopened = make_window(wait_loaded=False)
    assert reopened.size() == smaller


def test_unreadable_saved_geometry_gives_the_default_size(qtbot: Any, make_window: Any) -> None:
    window = make_window(wait_loaded=False, window_geometry="not a geometry")
    assert window.size() == first_size(window)


def test_help_about_opens_after_the_menus_were_built(qtbot: Any, make_window: Any) -> None:
    window = make_window(wait_loaded=False)
    gc.collect()  # the object that built the menus is gone; its actions must still work
    about = window.findChild(QAction, "aboutAction")
    shown: list[str] = []

    def close_it() -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            shown.append(box.text())
            box.accept()

    QTimer.singleShot(200, close_it)
    about.trigger()
    assert shown and "SpecChat" in shown[0]
