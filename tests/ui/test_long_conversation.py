"""A conversation of 5000 turns: opening it and sending a message keep the window responsive."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from desktop_app.store import History
from desktop_app.ui.transcript.chat_view import SHOWN_AT_ONCE
from tests.ui.helpers import next_answer, type_and_send
from tests.ui.test_responsiveness import GapProbe

TURNS = 5000
MAX_GAP_S = 0.5


def _long_conversation(turns: int) -> int:
    history = History()  # the test's SPECCHAT_HOME, the file the window opens
    try:
        conversation = history.create_conversation("A very long chat")
        for i in range(turns):
            role = "user" if i % 2 == 0 else "assistant"
            history.add_message(
                conversation.id,
                role,
                f"Message **{i}** of a very long chat, with some words in it.",
                {"generated_tokens": 12, "mode": "off"} if role == "assistant" else None,
            )
        return conversation.id
    finally:
        history.close()


def test_a_five_thousand_turn_conversation_opens_and_answers_without_freezing(
    qtbot: Any, make_window: Any, home: Path, record_property: Any
) -> None:
    window = make_window(max_tokens=8, spec_mode="off")
    conversation = _long_conversation(TURNS)
    window.conversations.refresh()
    probe = GapProbe()
    probe.start()
    start = time.perf_counter()
    window.session.open(conversation)  # what choosing it in the conversation list does
    opened_s = time.perf_counter() - start
    qtbot.wait(200)  # layout and painting of what was shown
    open_gap = probe.max_gap
    shown = window.chat_view.messages
    assert shown[-1].text == f"Message **{TURNS - 1}** of a very long chat, with some words in it."
    assert window.chat_view.earlier_count + len(shown) == TURNS and len(shown) == SHOWN_AT_ONCE
    with next_answer(qtbot, window.client) as watch:
        type_and_send(qtbot, window, "And one more question?")
    probe.timer.stop()
    record_property("open_ms", round(opened_s * 1000))
    record_property("max_event_loop_gap_ms", round(probe.max_gap * 1000, 1))
    print(
        f"\n{TURNS} turns: opened in {opened_s * 1000:.0f} ms; max event-loop gap {open_gap * 1000:.0f} ms "
        f"while opening, {probe.max_gap * 1000:.0f} ms in all over {probe.ticks} ticks"
    )
    assert watch.done is not None, watch.failure
    assert watch.done.stats.dropped_turns > 0 and watch.done.stats.generated_tokens > 0
    assert window.chat_view.messages[-1].text == watch.done.text
    assert probe.max_gap < MAX_GAP_S, f"the event loop stalled for {probe.max_gap * 1000:.0f} ms"


def test_earlier_messages_come_into_view_on_request(qtbot: Any, make_window: Any, home: Path) -> None:
    window = make_window(wait_loaded=False)
    window.session.open(_long_conversation(100))
    view = window.chat_view
    assert len(view.messages) == SHOWN_AT_ONCE == 40 and view.earlier_button.isVisible()
    assert view.earlier_button.text() == "Show 40 earlier messages (60 not shown)"
    first_shown = view.messages[0].text
    qtbot.mouseClick(view.earlier_button, Qt.MouseButton.LeftButton)
    assert view.messages[40].text == first_shown and view.earlier_count == 20
    assert view.earlier_button.text() == "Show 20 earlier messages (20 not shown)"
    qtbot.mouseClick(view.earlier_button, Qt.MouseButton.LeftButton)
    assert [m.text for m in view.messages[:2]] == [
        f"Message **{i}** of a very long chat, with some words in it." for i in (0, 1)
    ]
    assert len(view.messages) == 100 and view.earlier_count == 0 and not view.earlier_button.isVisible()
    assert [w.action_button.isEnabled() for w in view.messages].count(True) == 2  # the last of each role
