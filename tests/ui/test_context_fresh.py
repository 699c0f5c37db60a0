"""The context meter counts what the next prompt holds now (issue 49, item 2): a new chat, another
version shown, the window started again, a new context size, and a message being edited."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop_app.engine.api import Message
from tests.ui.conftest import LOAD_TIMEOUT_MS
from tests.ui.helpers import last_answer, next_answer, send_and_wait
from tests.ui.test_context import counted
from tests.ui.test_versions import click, switch_of

LONG = "Please tell me everything about lighthouses, their keepers, their lamps and their history. " * 4


def engine_count(qtbot: Any, window: Any, messages: list[Message]) -> int:
    """What the engine counts for these messages (with the conversation's system prompt)."""
    got: dict[str, Any] = {}

    def on_counted(asked: int, size: Any, error: str) -> None:
        if asked == ident:
            got["size"], got["error"] = size, error

    window.client.prompt_counted.connect(on_counted)
    ident = window.client.count_prompt(window.answers.request_for(messages), keep=True)
    qtbot.waitUntil(lambda: "size" in got, timeout=30_000)
    window.client.prompt_counted.disconnect(on_counted)
    assert got["size"] is not None, got["error"]
    return int(got["size"].tokens)


def test_a_new_chat_counts_none_of_the_last_one(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=8)
    empty = counted(qtbot, window)
    assert empty == engine_count(qtbot, window, [])
    send_and_wait(qtbot, window, LONG)
    assert counted(qtbot, window) > empty + 50
    click(qtbot, window.conversations.new_button)
    assert counted(qtbot, window) == empty


def test_each_version_shown_is_counted(qtbot: Any, make_window: Any, models: Any, home: Path) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=4)
    send_and_wait(qtbot, window, "Original question")
    short = counted(qtbot, window)
    window.settings.set("max_tokens", 40)
    with next_answer(qtbot, window.client):
        click(qtbot, last_answer(window).action_button)  # Regenerate: a longer answer, 2/2
    qtbot.waitUntil(lambda: not window.session.busy)
    long = counted(qtbot, window)
    assert long > short
    click(qtbot, switch_of(last_answer(window)).previous)  # < 1/2
    assert counted(qtbot, window) == short
    click(qtbot, switch_of(last_answer(window)).next)  # > 2/2
    assert counted(qtbot, window) == long
    click(qtbot, switch_of(last_answer(window)).previous)  # < 1/2, kept when the window starts again
    window.close()
    again = make_window(target_path=models.target, drafter="none", max_tokens=4)
    assert last_answer(again).text == window.history.messages(window.session.conversation_id)[-1].content
    assert counted(qtbot, again) == short


def test_a_new_context_size_is_shown(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=8)
    send_and_wait(qtbot, window, "Hello there")
    counted(qtbot, window)
    assert window.meter.prompt_size.n_ctx == 4096
    window.settings.set("n_ctx", 512)  # what Preferences applies
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS):
        window.preferences._applied(frozenset({"n_ctx"}))
    counted(qtbot, window)
    assert window.meter.prompt_size.n_ctx == 512
    assert "/ 512 tokens" in window.meter.label.text()


def test_editing_counts_the_prompt_up_to_the_message_edited(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=30)
    done = send_and_wait(qtbot, window, LONG)
    whole = counted(qtbot, window)
    click(qtbot, [m for m in window.chat_view.messages if m.role == "user"][-1].action_button)  # Edit & resend
    assert window.session.editing is not None and window.input.toPlainText() == LONG.strip()
    edited = counted(qtbot, window)
    assert edited == engine_count(qtbot, window, [Message(role="user", content=LONG.strip())])
    assert edited < whole + done.stats.prompt_tokens  # not the conversation and the text again
    window.input.setPlainText("Short")
    assert counted(qtbot, window) == engine_count(qtbot, window, [Message(role="user", content="Short")])
