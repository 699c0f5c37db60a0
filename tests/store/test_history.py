"""History: a real SQLite file in WAL mode; conversations newest first; streaming saves."""

from __future__ import annotations

import random
import sqlite3
import time
from pathlib import Path

import pytest

from desktop_app.store import HistoryDamaged, start_fresh
from desktop_app.store.history import History


@pytest.fixture()
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> History:
    monkeypatch.setenv("SPECCHAT_HOME", str(tmp_path))
    store = History()
    yield store
    store.close()


def test_the_database_lives_under_specchat_home_in_wal_mode(history: History, tmp_path: Path) -> None:
    assert history.path == tmp_path / "data" / "history.sqlite3"
    assert history.path.is_file()
    assert history.journal_mode == "wal"


def test_conversations_are_listed_newest_first(history: History) -> None:
    first = history.create_conversation("first")
    time.sleep(0.01)
    second = history.create_conversation("second")
    assert [c.title for c in history.conversations()] == ["second", "first"]
    time.sleep(0.01)
    history.add_message(first.id, "user", "hello again")  # activity moves it to the top
    assert [c.id for c in history.conversations()] == [first.id, second.id]


def test_rename_and_delete(history: History) -> None:
    conv = history.create_conversation("draft title")
    history.add_message(conv.id, "user", "hi")
    history.rename(conv.id, "  Better title ")
    assert history.conversation(conv.id).title == "Better title"
    history.delete(conv.id)
    assert history.conversation(conv.id) is None
    assert history.messages(conv.id) == []  # messages go with it


def test_search_finds_titles_and_message_text(history: History) -> None:
    a = history.create_conversation("Rust lifetimes")
    b = history.create_conversation("Cooking")
    history.add_message(b.id, "assistant", "Add 50% more SALT_and pepper")
    assert [c.id for c in history.search("lifetime")] == [a.id]
    assert [c.id for c in history.search("salt_and")] == [b.id]
    assert [c.id for c in history.search("50%")] == [b.id]
    assert [c.id for c in history.search("%")] == [b.id]  # a literal %, not a wildcard
    assert history.search("nothing like this") == []


def test_a_streaming_answer_is_readable_from_another_connection(history: History) -> None:
    conv = history.create_conversation("chat")
    history.add_message(conv.id, "user", "Tell me a story")
    answer = history.add_message(conv.id, "assistant", "")
    history.update_message(answer.id, "Once upon")
    # what a crash would leave: another process opening the file sees the partial answer
    other = sqlite3.connect(history.path)
    assert other.execute("SELECT content FROM messages WHERE id = ?", (answer.id,)).fetchone()[0] == "Once upon"
    other.close()
    history.update_message(answer.id, "Once upon a time.", {"generated_tokens": 5, "mode": "on"})
    reopened = History(history.path)
    messages = reopened.messages(conv.id)
    reopened.close()
    assert [(m.role, m.content) for m in messages] == [("user", "Tell me a story"), ("assistant", "Once upon a time.")]
    assert messages[1].stats == {"generated_tokens": 5, "mode": "on"}
    assert messages[0].stats is None


def _damaged_history(path: Path) -> bytes:
    """A real history with a few hundred messages, one of its pages then overwritten."""
    history = History(path)
    conversation = history.create_conversation("long")
    for i in range(300):
        history.add_message(conversation.id, "user", f"message {i} " + "text " * 40)
    history.close()
    data = bytearray(path.read_bytes())
    page = 4096
    data[5 * page : 6 * page] = bytes(random.Random(1).randrange(256) for _ in range(page))
    path.write_bytes(bytes(data))
    return bytes(data)


@pytest.mark.parametrize("kind", ["random bytes", "damaged page"])
def test_an_unreadable_history_is_reported_and_left_byte_for_byte(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "history.sqlite3"
    if kind == "random bytes":
        original = bytes(random.Random(0).randrange(256) for _ in range(20_000))
        path.write_bytes(original)
    else:
        original = _damaged_history(path)
    with pytest.raises(HistoryDamaged) as caught:
        History(path)
    assert str(path) in str(caught.value)
    assert path.read_bytes() == original
    fresh, kept = start_fresh(path)
    try:
        assert kept.read_bytes() == original and kept.name.startswith("history.sqlite3.broken-")
        assert fresh.conversations() == [] and fresh.create_conversation("new").id > 0
    finally:
        fresh.close()


def test_a_conversation_keeps_its_own_options_until_it_is_deleted(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite3")
    conv = history.create_conversation("a")
    assert history.option(conv.id, "system_prompt", "default") == "default"
    history.set_option(conv.id, "system_prompt", "Be brief <always>.")
    history.set_option(conv.id, "think", False)
    assert history.option(conv.id, "system_prompt") == "Be brief <always>."
    assert history.option(conv.id, "think") is False
    history.set_option(conv.id, "think", None)
    assert history.option(conv.id, "think", True) is True
    history.delete(conv.id)
    assert history.option(conv.id, "system_prompt") is None
