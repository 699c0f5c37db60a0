"""Branch a conversation (store/branch.py): the messages up to one, as shown, in a new conversation."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from desktop_app.store import History
from desktop_app.store.branch import BRANCH_MARK, branch_conversation, branch_title
from desktop_app.store.history import MAX_TITLE_CHARS
from desktop_app.store.tool_calls import CallStatus


def test_branch_copies_the_path_shown_up_to_a_message(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite3")
    conv = history.create_conversation("Trip")
    history.set_option(conv.id, "system_prompt", "Be brief")
    history.set_option(conv.id, "input_draft", "not sent")
    q = history.add_message(conv.id, "user", "Where to?")
    a1 = history.add_message(conv.id, "assistant", "Rome", {"generated_tokens": 1})
    history.add_version(a1.id, "Paris", {"generated_tokens": 2})  # the version shown
    answer = history.messages(conv.id)[-1]
    (made,) = history.tool_calls.add(
        answer.id, [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    )
    history.tool_calls.update(replace(made, status=CallStatus.DONE, result="42"))
    history.add_message(conv.id, "user", "Why?")
    history.add_message(conv.id, "assistant", "Food")
    path = history.messages(conv.id)
    new = branch_conversation(history, conv.id, path[1].id)
    assert new.title == "Trip (branch)"
    copied = history.messages(new.id)
    assert [(m.role, m.content, m.stats) for m in copied] == [
        ("user", "Where to?", None),
        ("assistant", "Paris", {"generated_tokens": 2}),
    ]
    assert copied[0].id != q.id
    (call,) = history.tool_calls.of([copied[1].id])[copied[1].id]
    assert (call.name, call.status, call.result) == ("f", CallStatus.DONE, "42")
    assert history.option(new.id, "system_prompt") == "Be brief"
    assert history.option(new.id, "input_draft") is None
    assert [m.content for m in history.messages(conv.id)] == ["Where to?", "Paris", "Why?", "Food"]
    history.close()


def test_a_long_title_keeps_its_mark() -> None:
    title = branch_title("x" * MAX_TITLE_CHARS)
    assert len(title) == MAX_TITLE_CHARS and title.endswith(BRANCH_MARK)
