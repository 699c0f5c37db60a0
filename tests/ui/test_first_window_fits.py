"""The first window fits the screen with its title bar and borders, and a saved geometry is pulled
inside the screen (issue 49, item 3): at 1280x800 and 800x600 the status bar was below the
screen's edge. Qt's offscreen screen has no window frames: the sizing is checked for given areas
and frames, the window for the frame assumed until one is reported."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QRect, QSize
from PySide6.QtWidgets import QWidget

from desktop_app.ui.main_window import DEFAULT_SIZE
from desktop_app.ui.window.window_geometry import first_geometry
from desktop_app.ui.window.window_placement import DECORATION

FRAME = QSize(2, 30)  # e.g. openbox: a 1 px border either side, a 29 px title bar


@pytest.mark.parametrize(
    ("area", "frame", "expected"),
    [
        (QRect(0, 0, 1280, 800), FRAME, QRect(0, 0, 1278, 770)),  # the whole screen, less the frame
        (QRect(0, 0, 800, 600), FRAME, QRect(0, 0, 798, 570)),
        (QRect(0, 24, 1280, 776), DECORATION, QRect(0, 24, 1264, 736)),  # a panel on top
        (QRect(0, 0, 1920, 1080), FRAME, QRect(319, 125, 1280, 800)),  # room to spare: centred
        (QRect(1920, 0, 1280, 1024), FRAME, QRect(1920, 97, 1278, 800)),  # a second screen
    ],
)
def test_the_first_window_and_its_frame_fit_the_available_area(area: QRect, frame: QSize, expected: QRect) -> None:
    place = first_geometry(area, DEFAULT_SIZE, frame)
    assert place == expected
    assert area.contains(QRect(place.topLeft(), place.size() + frame))  # the frame, title bar included


def test_the_first_window_leaves_room_for_its_frame(qtbot: Any, make_window: Any) -> None:
    window = make_window(wait_loaded=False)
    area = window.screen().availableGeometry()
    assert window.width() + DECORATION.width() <= area.width()
    assert window.height() + DECORATION.height() <= area.height()
    status = window.statusBar()
    bottom = status.mapToGlobal(status.rect().bottomLeft()).y()
    assert status.isVisible() and bottom <= area.bottom()


def test_a_saved_geometry_past_the_screen_is_pulled_inside(qtbot: Any, make_window: Any) -> None:
    moved = QWidget()
    moved.setGeometry(500, 300, 700, 500)  # saved on a larger screen: its size fits this one
    saved = bytes(moved.saveGeometry().toBase64().data()).decode("ascii")
    window = make_window(window_geometry=saved, wait_loaded=False)
    area = window.screen().availableGeometry()
    qtbot.waitUntil(lambda: area.contains(window.frameGeometry()), timeout=2000)
    assert (window.width(), window.height()) == (700, 500)  # kept, only moved
