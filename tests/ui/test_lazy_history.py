"""A conversation of large messages opens without freezing the window: the newest message is shown
at once, the others rendered a slice at a time, those in sight first, and the reader's place kept
(docs/window-speed.md, "Opening a conversation")."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer

from desktop_app.store import History
from tests.ui.sample_answers import long_answer

MESSAGES = 40
MESSAGE_CHARS = 50_000
MAX_SLICE_S = 0.5  # GUI-thread time between two turns of the event loop: 5x the render budget, for a busy machine


def _large_conversation() -> int:
    text = long_answer(MESSAGE_CHARS // 1150 + 1)[:MESSAGE_CHARS]  # paragraphs, lists, code, tables
    history = History()  # the test's SPECCHAT_HOME, the file the window opens
    try:
        conversation = history.create_conversation("Large answers")
        for i in range(MESSAGES):
            role = "user" if i % 2 == 0 else "assistant"
            history.add_message(conversation.id, role, f"Message {i}\n\n{text}", None)
        return conversation.id
    finally:
        history.close()


class SliceProbe:
    """The GUI thread's CPU time between two firings of a 5 ms timer: the longest stretch of work
    the event loop waited for."""

    def __init__(self) -> None:
        self.mark = time.thread_time()
        self.longest = 0.0
        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self.tick)
        self.timer.start()

    def tick(self) -> None:
        now = time.thread_time()
        self.longest, self.mark = max(self.longest, now - self.mark), now


def test_a_conversation_of_40_large_messages_opens_in_short_slices(
    qtbot: Any, make_window: Any, home: Path, record_property: Any
) -> None:
    window = make_window(wait_loaded=False)
    conversation = _large_conversation()
    view = window.chat_view
    start = time.thread_time()
    window.session.open(conversation)  # what choosing it in the conversation list does
    opened = time.thread_time() - start
    probe = SliceProbe()
    newest = view.messages[-1]
    assert not newest.pending and f"Message {MESSAGES - 1}" in newest.body.text()  # shown at once
    assert view.lazy.count > MESSAGES // 2  # the rest later
    qtbot.waitUntil(lambda: view.lazy.count == 0, timeout=120_000)
    probe.tick()
    probe.timer.stop()
    record_property("open_ms", round(opened * 1000))
    record_property("longest_slice_ms", round(probe.longest * 1000))
    print(f"\nopened in {opened * 1000:.0f} ms of GUI time; the longest slice after it {probe.longest * 1000:.0f} ms")
    assert opened < MAX_SLICE_S and probe.longest < MAX_SLICE_S
    assert len(view.messages) == MESSAGES
    assert all(not m.pending and f"Message {i}" in m.body.text() for i, m in enumerate(view.messages))
    bar = view.verticalScrollBar()
    assert bar.value() == bar.maximum()  # still at the newest message


def test_the_reader_stays_in_place_while_messages_above_are_rendered(qtbot: Any, make_window: Any, home: Path) -> None:
    window = make_window(wait_loaded=False)
    conversation = _large_conversation()
    view = window.chat_view
    window.session.open(conversation)
    read = view.messages[MESSAGES // 2]
    assert read.pending
    view.verticalScrollBar().setValue(read.y())  # the reader goes up to it before it is rendered
    qtbot.waitUntil(lambda: not read.pending, timeout=60_000)
    place = read.mapTo(view.viewport(), read.rect().topLeft()).y()
    assert view.lazy.count > 0 and any(m.pending for m in view.messages[: MESSAGES // 2])
    qtbot.waitUntil(lambda: view.lazy.count == 0, timeout=120_000)
    assert read.mapTo(view.viewport(), read.rect().topLeft()).y() == place
