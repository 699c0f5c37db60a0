"""The window paints with its own thread only: Qt's GUI thread pool would split each paint of a
large window over pooled threads, whose wake-ups take the engine's cores while an answer streams
(desktop_app/ui/__init__.py, docs/window-speed.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

POOLED = "Thread (pooled)"  # the name Qt gives a QThreadPool's threads


def _thread_names() -> list[str]:
    return [(task / "comm").read_text().strip() for task in Path("/proc/self/task").iterdir()]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads thread names from /proc")
def test_painting_a_large_window_starts_no_pooled_threads(make_window: Any, qtbot: Any) -> None:
    window = make_window(wait_loaded=False)
    window.resize(1600, 1000)
    window.chat_view.add_message("user", "A message to paint. " * 200)
    before = _thread_names().count(POOLED)
    for _ in range(10):
        window.repaint()
        window.grab()  # a full render of the window, as the backing store's flush
        qtbot.wait(20)
    assert _thread_names().count(POOLED) == before == 0
