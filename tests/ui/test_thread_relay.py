"""A background thread's relay is let go in the GUI thread, never deleted by that thread."""

from __future__ import annotations

import threading
import time
from typing import Any

import shiboken6
from PySide6.QtCore import QObject

from desktop_app.ui.engine.thread_relay import hold


def test_a_relay_is_never_deleted_by_its_background_thread(qtbot: Any) -> None:
    relay = QObject()
    child = QObject(relay)  # goes with the relay's C++ object: tells whether it still exists
    thread = threading.Thread(target=lambda r: time.sleep(0.05), args=(relay,))
    hold(relay, thread)
    thread.start()
    del relay  # the thread's arguments now hold the only reference but the GUI thread's
    thread.join()
    # Without hold() the thread dropping the last reference deletes the QObject in that
    # thread, racing the GUI thread delivering its queued signals (a segfault now and then).
    assert shiboken6.isValid(child)
    hold(QObject(), threading.Thread(target=lambda: None))  # the next relay: ended ones are let go here
    assert not shiboken6.isValid(child)
