"""Versions in the history: edited questions and regenerated answers are kept as siblings in a
message tree; the conversation shows one path; old files migrate in place."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from desktop_app.store.history import History, read_messages

# The schema of history files written before versions (SpecChat 0.x), as they are on disk.
OLD_SCHEMA = """
CREATE TABLE conversations (
    id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
    content TEXT NOT NULL, stats TEXT, created REAL NOT NULL
);
CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
"""


@pytest.fixture()
def history(tmp_path: Path) -> History:
    store = History(tmp_path / "history.sqlite3")
    yield store
    store.close()


def shown(history: History, conversation: int) -> list[tuple[str, str, int, int]]:
    return [(m.role, m.content, m.version, m.versions) for m in history.messages(conversation)]


def test_a_regenerated_answer_is_a_new_version_and_the_old_one_stays(history: History) -> None:
    conv = history.create_conversation("chat").id
    history.add_message(conv, "user", "Name a colour")
    first = history.add_message(conv, "assistant", "Red", {"finish_reason": "stop"})
    second = history.add_version(first.id, "")
    assert (second.version, second.versions) == (2, 2)
    history.update_message(second.id, "Blue", {"finish_reason": "stop"})
    assert shown(history, conv) == [("user", "Name a colour", 1, 1), ("assistant", "Blue", 2, 2)]
    assert [m.content for m in history.versions(second.id)] == ["Red", "Blue"]
    history.switch_version(first.id)
    assert shown(history, conv) == [("user", "Name a colour", 1, 1), ("assistant", "Red", 1, 2)]
    assert history.messages(conv)[1].stats == {"finish_reason": "stop"}
    # what comes next follows the version shown
    history.add_message(conv, "user", "Why red?")
    assert [m.content for m in history.messages(conv)] == ["Name a colour", "Red", "Why red?"]
    history.switch_version(second.id)
    assert [m.content for m in history.messages(conv)] == ["Name a colour", "Blue"]


def test_an_edited_question_branches_and_each_branch_remembers_its_own_turns(history: History) -> None:
    conv = history.create_conversation("chat").id
    q1 = history.add_message(conv, "user", "What is 2+2?")
    history.add_message(conv, "assistant", "4")
    history.add_message(conv, "user", "And 3+3?")
    history.add_message(conv, "assistant", "6")
    edited = history.add_version(q1.id, "What is 2+3?")
    assert [m.content for m in history.messages(conv)] == ["What is 2+3?"]
    history.add_message(conv, "assistant", "5")
    assert shown(history, conv) == [("user", "What is 2+3?", 2, 2), ("assistant", "5", 1, 1)]
    history.switch_version(q1.id)  # the first branch comes back whole, all four messages
    assert shown(history, conv) == [
        ("user", "What is 2+2?", 1, 2),
        ("assistant", "4", 1, 1),
        ("user", "And 3+3?", 1, 1),
        ("assistant", "6", 1, 1),
    ]
    history.switch_version(edited.id)
    assert [m.content for m in history.messages(conv)] == ["What is 2+3?", "5"]
    # nothing left the history; search finds a version that is not shown
    assert sorted(m.content for m in read_messages(history.path)) == sorted(
        ["What is 2+2?", "4", "And 3+3?", "6", "What is 2+3?", "5"]
    )
    assert [c.id for c in history.search("3+3")] == [conv]


def test_deleting_a_version_removes_what_follows_it_and_shows_another(history: History) -> None:
    conv = history.create_conversation("chat").id
    q1 = history.add_message(conv, "user", "first question")
    history.add_message(conv, "assistant", "first answer")
    q2 = history.add_version(q1.id, "second question")
    history.add_message(conv, "assistant", "second answer")
    history.delete_message(q2.id)
    assert shown(history, conv) == [("user", "first question", 1, 1), ("assistant", "first answer", 1, 1)]
    assert {m.content for m in read_messages(history.path)} == {"first question", "first answer"}
    history.delete_message(q1.id)
    assert history.messages(conv) == []
    assert history.add_message(conv, "user", "again").parent_id is None


def test_an_old_history_file_migrates_in_place_and_keeps_its_messages(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(OLD_SCHEMA)
    old.execute("INSERT INTO conversations (title, created, updated) VALUES ('a', 1, 1), ('b', 2, 2)")
    rows = [  # two conversations written in turns, as the window does
        (1, "user", "hello a", None),
        (2, "user", "hello b", None),
        (1, "assistant", "hi from a", '{"generated_tokens": 3}'),
        (2, "assistant", "hi from b", None),
        (1, "user", "bye a", None),
    ]
    old.executemany(
        "INSERT INTO messages (conversation_id, role, content, stats, created) VALUES (?, ?, ?, ?, 0)", rows
    )
    old.commit()
    old.close()
    assert [m.content for m in read_messages(path)][:2] == ["hello a", "hello b"]  # readable before migrating
    history = History(path)
    try:
        assert shown(history, 1) == [
            ("user", "hello a", 1, 1),
            ("assistant", "hi from a", 1, 1),
            ("user", "bye a", 1, 1),
        ]
        assert history.messages(1)[1].stats == {"generated_tokens": 3}
        assert [m.content for m in history.messages(2)] == ["hello b", "hi from b"]
        assert [m.parent_id for m in history.messages(1)] == [None, 1, 3]
        history.add_message(2, "user", "more b")  # a new message follows the last one
        assert [m.content for m in history.messages(2)] == ["hello b", "hi from b", "more b"]
    finally:
        history.close()
    columns = {r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(messages)")}
    assert {"parent_id", "active"} <= columns  # migrated in the file itself
    reopened = History(path)  # and opened again as it is now
    assert [m.content for m in reopened.messages(1)] == ["hello a", "hi from a", "bye a"]
    reopened.close()
