"""The status bar names the CPU threads the engine computes with, and why."""

from __future__ import annotations

import re
from typing import Any

from tests.ui.helpers import send_and_wait

MEASURED = r"\d+ threads?(: (machine busy|fastest for this model))?"


def test_a_count_set_in_settings_is_shown_as_set(qtbot: Any, make_window: Any) -> None:
    window = make_window(n_threads=1)
    assert window.status.threads.text() == "1 thread: set by you"
    done = send_and_wait(qtbot, window, "Hello")
    assert done.stats.threads == "1 thread: set by you"
    assert window.status.threads.text() == "1 thread: set by you"


def test_a_measured_count_is_shown_and_follows_the_answers(qtbot: Any, make_window: Any) -> None:
    window = make_window(n_threads=0)  # 0: measured (the default)
    assert re.fullmatch(r"\d+ threads?", window.status.threads.text())
    done = send_and_wait(qtbot, window, "Write two sentences about the sea.")
    assert re.fullmatch(MEASURED, done.stats.threads)
    assert window.status.threads.text() == done.stats.threads
    assert window.status.threads.toolTip()
