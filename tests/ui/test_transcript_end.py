"""The end of the last answer stays at the bottom of the transcript (issue 49, item 1): after an
answer ends, after Esc, after ``< 1/2 >`` and when a conversation is opened, in a conversation
taller than the window whose code line is wider than the transcript (it scrolls sideways); and
while an answer streams, with no wide line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from desktop_app.store import History
from tests.ui.conftest import ANSWER_TIMEOUT_MS
from tests.ui.helpers import last_answer, next_answer, send_and_wait, type_and_send
from tests.ui.sample_answers import long_answer
from tests.ui.test_streaming_refresh import stream, streaming_answer, streaming_view
from tests.ui.test_versions import click, switch_of

# a paragraph that wraps: at its narrowest (what a layout's minimum height adds up) many lines
QUESTION = "Add them all, " + " ".join(f"then value {i}" for i in range(80)) + "."
MARGIN_PX = 8  # the transcript's own margin below the last message (ChatView)
SLACK_PX = 4
WIDE_CODE = "```python\nresult = " + " + ".join(f"value_{i}" for i in range(60)) + "\n```\n\nThat sums them."


def blank_below(window: Any) -> int:
    """Pixels between the last message's bottom edge and the viewport's (negative: cut off)."""
    view = getattr(window, "chat_view", window)
    view.lay_out()
    last = view.messages[-1]
    bottom = last.mapTo(view.viewport(), last.rect().bottomLeft()).y() + 1
    return view.viewport().height() - bottom


def assert_at_end(qtbot: Any, window: Any) -> None:
    view = window.chat_view
    qtbot.wait(200)  # what a user sees once the window has settled
    assert view.widget().height() > 2 * view.viewport().height()  # taller than the window
    assert view.horizontalScrollBar().maximum() > 0  # the code line scrolls sideways
    assert 0 <= blank_below(window) <= MARGIN_PX + SLACK_PX, f"{blank_below(window)} px blank below the last message"


def tall_conversation() -> int:
    history = History()  # the test's SPECCHAT_HOME, the file the window opens
    try:
        conversation = history.create_conversation("Tall")
        for i in range(6):
            role = "user" if i % 2 == 0 else "assistant"
            history.add_message(conversation.id, role, f"Message {i}\n\n{long_answer(1)}", None)
        history.add_message(conversation.id, "user", QUESTION, None)
        history.add_message(conversation.id, "assistant", WIDE_CODE, None)
        return conversation.id
    finally:
        history.close()


def opened(qtbot: Any, make_window: Any, models: Any, max_tokens: int = 30) -> Any:
    window = make_window(target_path=models.target, drafter="none", max_tokens=max_tokens)
    window.resize(1000, 700)
    window.session.open(tall_conversation())
    qtbot.waitUntil(lambda: window.chat_view.lazy.count == 0, timeout=60_000)
    return window


def test_an_opened_conversation_ends_at_the_bottom(qtbot: Any, make_window: Any, models: Any, home: Path) -> None:
    window = opened(qtbot, make_window, models)
    assert last_answer(window).text == WIDE_CODE
    assert_at_end(qtbot, window)
    tall = window.session.conversation_id
    send_and_wait(qtbot, window, "Tell me more")
    window.session.open(None)  # a new chat, then back to this one
    window.session.open(tall)
    qtbot.waitUntil(lambda: window.chat_view.lazy.count == 0, timeout=60_000)
    assert_at_end(qtbot, window)


def test_a_finished_answer_ends_at_the_bottom(qtbot: Any, make_window: Any, models: Any, home: Path) -> None:
    window = opened(qtbot, make_window, models)
    send_and_wait(qtbot, window, "Tell me more")
    assert_at_end(qtbot, window)


def test_a_stopped_answer_ends_at_the_bottom(qtbot: Any, make_window: Any, models: Any, home: Path) -> None:
    window = opened(qtbot, make_window, models, max_tokens=3000)
    with next_answer(qtbot, window.client) as watch:
        type_and_send(qtbot, window, "Count to a thousand.")
        qtbot.waitUntil(lambda: len(last_answer(window).text) > 200, timeout=ANSWER_TIMEOUT_MS)
        qtbot.keyClick(window.input, Qt.Key.Key_Escape)
    assert watch.done is not None and watch.done.stats.finish_reason == "cancelled"
    qtbot.waitUntil(lambda: not window.session.busy)
    assert_at_end(qtbot, window)


def test_switching_versions_ends_at_the_bottom(qtbot: Any, make_window: Any, models: Any, home: Path) -> None:
    window = opened(qtbot, make_window, models)
    with next_answer(qtbot, window.client):
        click(qtbot, last_answer(window).action_button)  # Regenerate: a short answer, 2/2
    qtbot.waitUntil(lambda: not window.session.busy)
    assert_at_end(qtbot, window)
    click(qtbot, switch_of(last_answer(window)).previous)  # < : the wide code block again
    assert last_answer(window).text == WIDE_CODE
    assert_at_end(qtbot, window)
    click(qtbot, switch_of(last_answer(window)).next)  # >
    assert_at_end(qtbot, window)


def test_a_streaming_answer_and_its_end_stay_at_the_bottom(qtbot: Any) -> None:
    # no wide line: the blank space came from the messages' heights at their narrowest too
    view: Any = streaming_view(qtbot)
    view.add_message("user", QUESTION)
    answer = streaming_answer(view)
    text = long_answer(4)
    for start in range(0, len(text), 400):
        stream(qtbot, answer, [(text[start : start + 400], "")])
        if view.widget().height() > view.viewport().height():
            assert 0 <= blank_below(view) <= MARGIN_PX + SLACK_PX, f"{blank_below(view)} px blank"
    assert view.widget().height() > 3 * view.viewport().height()
    view.set_streaming(False)
    answer.set_stats({"generated_tokens": len(text) // 4})
    qtbot.wait(100)
    assert 0 <= blank_below(view) <= MARGIN_PX + SLACK_PX, f"{blank_below(view)} px blank"
