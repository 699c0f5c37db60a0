"""Nothing lost on edit and regenerate: versions with ``< 1/2 >``, drafts per conversation, in the
real window with the real engine process (factory models) and the real SQLite file."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from desktop_app.ui.transcript.version_switch import VersionSwitch
from tests.store.test_history_versions import OLD_SCHEMA
from tests.ui.helpers import last_answer, next_answer, send_and_wait


def click(qtbot: Any, widget: Any) -> None:
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)


def open_in_list(qtbot: Any, window: Any, conversation: int) -> None:
    """Click a conversation in the side list, as a user does."""
    sidebar = window.conversations.list
    row = next(i for i in range(sidebar.count()) if sidebar.item(i).data(Qt.ItemDataRole.UserRole) == conversation)
    qtbot.mouseClick(
        sidebar.viewport(), Qt.MouseButton.LeftButton, pos=sidebar.visualItemRect(sidebar.item(row)).center()
    )
    assert window.session.conversation_id == conversation


def switch_of(message: Any) -> VersionSwitch:
    switches = message.findChildren(VersionSwitch)
    assert len(switches) == 1, f"{len(switches)} version switches on the message"
    return switches[0]


def transcript(window: Any) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in window.chat_view.messages]


def stored_rows(path: Path, conversation: int) -> list[tuple[str, str, int | None]]:
    """Every message of a conversation in the SQLite file itself (read by another connection)."""
    db = sqlite3.connect(path)
    try:
        return db.execute(
            "SELECT role, content, parent_id FROM messages WHERE conversation_id = ? ORDER BY id", (conversation,)
        ).fetchall()
    finally:
        db.close()


def test_regenerate_keeps_the_old_answer_reachable(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=6)
    first = send_and_wait(qtbot, window, "Original question").text
    assert not last_answer(window).findChildren(VersionSwitch)  # one version: no switch
    window.settings.set("max_tokens", 20)  # the answer made again differs (longer)
    with next_answer(qtbot, window.client) as watch:
        click(qtbot, last_answer(window).action_button)  # Regenerate
    qtbot.waitUntil(lambda: not window.session.busy)
    assert watch.done is not None
    second = watch.done.text
    assert second != first
    assert transcript(window) == [("user", "Original question"), ("assistant", second)]
    switch = switch_of(last_answer(window))
    assert switch.label.text() == "2/2" and not switch.next.isEnabled()
    click(qtbot, switch.previous)  # <
    assert transcript(window) == [("user", "Original question"), ("assistant", first)]
    assert switch_of(last_answer(window)).label.text() == "1/2"
    # the history shows the version chosen, and the next prompt is what the window shows
    assert [m.content for m in window.history.messages(window.session.conversation_id)][1] == first
    assert window.session.engine_messages()[-1]["content"] == first
    click(qtbot, switch_of(last_answer(window)).next)  # >
    assert transcript(window)[-1] == ("assistant", second)


def test_edit_and_resend_then_switching_conversations_keeps_both_versions(
    qtbot: Any, make_window: Any, models: Any
) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=8)
    send_and_wait(qtbot, window, "Question in another chat")
    other = window.session.conversation_id
    click(qtbot, window.conversations.new_button)
    original_answer = send_and_wait(qtbot, window, "Original question").text
    chat = window.session.conversation_id
    path = window.history.path
    # Edit & resend: the text goes into the box, in editing mode; nothing is deleted
    click(qtbot, window.chat_view.messages[0].action_button)
    assert window.input.toPlainText() == "Original question"
    assert window.editing_bar.isVisible() and "Editing" in window.editing_bar.label.text()
    assert transcript(window) == [("user", "Original question"), ("assistant", original_answer)]
    window.input.setPlainText("Edited question")
    # another conversation: its own (empty) box; the edit waits in its conversation
    open_in_list(qtbot, window, other)
    assert window.input.toPlainText() == "" and not window.editing_bar.isVisible()
    kept = stored_rows(path, chat)
    assert [r[:2] for r in kept] == [("user", "Original question"), ("assistant", original_answer)]
    open_in_list(qtbot, window, chat)
    assert window.input.toPlainText() == "Edited question" and window.editing_bar.isVisible()
    with next_answer(qtbot, window.client) as watch:
        click(qtbot, window.send_button)
    qtbot.waitUntil(lambda: not window.session.busy)
    assert watch.done is not None
    edited_answer = watch.done.text
    assert transcript(window) == [("user", "Edited question"), ("assistant", edited_answer)]
    assert not window.editing_bar.isVisible() and window.input.toPlainText() == ""
    # switching conversations away and back keeps both versions in the file
    open_in_list(qtbot, window, other)
    open_in_list(qtbot, window, chat)
    rows = stored_rows(path, chat)
    assert sorted(r[:2] for r in rows) == sorted(
        [
            ("user", "Original question"),
            ("assistant", original_answer),
            ("user", "Edited question"),
            ("assistant", edited_answer),
        ]
    )
    users = [r for r in rows if r[0] == "user"]
    assert [u[2] for u in users] == [None, None]  # versions: siblings, both first in the conversation
    # < on the user message: the original question and its answer are shown again
    switch = switch_of(window.chat_view.messages[0])
    assert switch.label.text() == "2/2"
    click(qtbot, switch.previous)
    assert transcript(window) == [("user", "Original question"), ("assistant", original_answer)]
    assert switch_of(window.chat_view.messages[0]).label.text() == "1/2"
    # the engine is asked about the branch shown, and the reply goes on that branch
    with next_answer(qtbot, window.client) as watch:
        window.input.setPlainText("A follow-up")
        click(qtbot, window.send_button)
    qtbot.waitUntil(lambda: not window.session.busy)
    assert watch.handle is not None and watch.done is not None
    assert [(m["role"], m["content"]) for m in watch.handle.request.messages] == [
        ("user", "Original question"),
        ("assistant", original_answer),
        ("user", "A follow-up"),
    ]
    click(qtbot, switch_of(window.chat_view.messages[0]).next)  # the edited branch has no follow-up
    assert transcript(window) == [("user", "Edited question"), ("assistant", edited_answer)]
    click(qtbot, switch_of(window.chat_view.messages[0]).previous)
    assert [text for _, text in transcript(window)] == [
        "Original question",
        original_answer,
        "A follow-up",
        watch.done.text,
    ]


def test_cancel_editing_gives_the_box_back(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=4)
    send_and_wait(qtbot, window, "A question")
    window.input.setPlainText("a half-written follow-up")
    click(qtbot, window.chat_view.messages[0].action_button)  # Edit & resend
    assert window.input.toPlainText() == "A question" and window.editing_bar.isVisible()
    click(qtbot, window.editing_bar.cancel)
    assert window.input.toPlainText() == "a half-written follow-up" and not window.editing_bar.isVisible()
    assert len(window.history.messages(window.session.conversation_id)) == 2


def test_the_input_draft_stays_with_its_conversation(qtbot: Any, make_window: Any, home: Path) -> None:
    from desktop_app.store import History

    history = History()
    first = history.create_conversation("First chat").id
    second = history.create_conversation("Second chat").id
    history.add_message(first, "user", "hello")
    history.close()
    window = make_window(wait_loaded=False)
    open_in_list(qtbot, window, first)
    qtbot.keyClicks(window.input, "half a thought")
    open_in_list(qtbot, window, second)
    assert window.input.toPlainText() == ""
    qtbot.keyClicks(window.input, "something else")
    open_in_list(qtbot, window, first)
    assert window.input.toPlainText() == "half a thought"
    click(qtbot, window.conversations.new_button)
    assert window.input.toPlainText() == ""  # a new conversation starts empty
    open_in_list(qtbot, window, second)
    assert window.input.toPlainText() == "something else"
    window.close()  # closing keeps the open conversation's text too
    reopened = make_window(wait_loaded=False)
    assert reopened.session.conversation_id == second
    assert reopened.input.toPlainText() == "something else"
    assert reopened.history.option(first, "input_draft") == "half a thought"


def test_an_old_history_file_opens_with_its_messages(qtbot: Any, make_window: Any, home: Path) -> None:
    path = home / "data" / "history.sqlite3"
    path.parent.mkdir(parents=True)
    old = sqlite3.connect(path)
    old.executescript(OLD_SCHEMA)
    old.execute("INSERT INTO conversations (title, created, updated) VALUES ('Old chat', 1, 1)")
    old.executemany(
        "INSERT INTO messages (conversation_id, role, content, stats, created) VALUES (1, ?, ?, ?, 0)",
        [("user", "An old question", None), ("assistant", "An old answer", '{"finish_reason": "stop"}')],
    )
    old.commit()
    old.close()
    window = make_window(wait_loaded=False)
    assert window.conversations.titles() == ["Old chat"]
    open_in_list(qtbot, window, 1)
    assert transcript(window) == [("user", "An old question"), ("assistant", "An old answer")]
    assert stored_rows(path, 1) == [("user", "An old question", None), ("assistant", "An old answer", 1)]
