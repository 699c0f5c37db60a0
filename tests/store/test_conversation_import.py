"""Issue 46, point 4: an import is refused whole or imported whole, checked before anything is
written, within declared limits (a real history file; each hostile file of the issue)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_app.store import History
from desktop_app.store.conversation_import import (
    MAX_IMPORT_BYTES,
    MAX_MESSAGE_CHARS,
    MAX_MESSAGES,
    ConversationFileError,
    read_conversation,
)
from desktop_app.store.export import export_file, import_file
from desktop_app.store.history import MAX_TITLE_CHARS

STATS = {"generated_tokens": 12, "decode_tokens_per_s": 31.5, "ttft_s": 0.2, "by_drafter": {"ngram": [4, 3]}}


@pytest.fixture
def history(tmp_path: Path) -> Iterator[History]:
    store = History(tmp_path / "history.sqlite3")
    keep = store.create_conversation("Kept")
    store.add_message(keep.id, "user", "Hello")
    yield store
    store.close()


def export(title: Any = "Chat", messages: Any = None, **extra: Any) -> dict[str, Any]:
    if messages is None:
        messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello", "stats": STATS}]
    return {"format": "specchat-conversation", "version": 1, "title": title, "messages": messages, **extra}


def write(tmp_path: Path, data: Any, name: str = "chat.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def refused(history: History, path: Path) -> str:
    """The one line an import of ``path`` is refused with; the history is as it was."""
    before = [(c.id, c.title) for c in history.conversations()]
    rows = history._db.execute("SELECT count(*) FROM messages").fetchone()[0]
    with pytest.raises(ConversationFileError) as error:
        import_file(history, path)
    assert [(c.id, c.title) for c in history.conversations()] == before
    assert history._db.execute("SELECT count(*) FROM messages").fetchone()[0] == rows
    message = str(error.value)
    assert "\n" not in message and len(message) < 400, message
    return message


def test_a_good_file_comes_back_whole_in_one_transaction(history: History, tmp_path: Path) -> None:
    path = write(tmp_path, export(options={"system_prompt": "Be brief.", "think": False}))
    conv = import_file(history, path)
    messages = history.messages(conv.id)
    assert [(m.role, m.content, m.stats) for m in messages] == [("user", "Hi", None), ("assistant", "Hello", STATS)]
    assert messages[1].parent_id == messages[0].id
    assert history.option(conv.id, "system_prompt") == "Be brief." and history.option(conv.id, "think") is False
    history.add_message(conv.id, "user", "And then?")  # goes on where the import ended
    assert [m.content for m in history.messages(conv.id)][-2:] == ["Hello", "And then?"]


def test_deep_nesting_is_refused_not_a_recursion_error(history: History, tmp_path: Path) -> None:
    path = write(tmp_path, '{"format": "specchat-conversation", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert refused(history, path) == "chat.json is not a SpecChat conversation (its JSON is nested too deeply)"


def test_a_lone_surrogate_is_refused_whole_and_leaves_no_empty_conversation(history: History, tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "fine"}, {"role": "assistant", "content": "bad \ud800 half"}]
    path = write(tmp_path, export(messages=messages))  # json.dumps writes the escape \ud800
    assert "message 2 is not valid text" in refused(history, path)
    assert "not valid text" in refused(history, write(tmp_path, export(title="\udfff")))


@pytest.mark.parametrize(
    "stats",
    [
        {"decode_tokens_per_s": "fast"},
        {"ttft_s": [1]},
        {"generated_tokens": {"a": 1}},
        {"drafter": ["ngram"]},
        {"by_drafter": {"ngram": "many"}},
        {"ttft_s": 1e999},
        [1, 2],
    ],
)
def test_stats_the_window_cannot_show_are_refused(history: History, tmp_path: Path, stats: Any) -> None:
    messages = [{"role": "assistant", "content": "Hello", "stats": stats}]
    text = json.dumps(export(messages=messages)).replace("Infinity", "1e999")  # finite as written, too big for a float
    assert "message 1's stats" in refused(history, write(tmp_path, text))


def test_a_huge_title_is_refused_at_once(history: History, tmp_path: Path) -> None:
    path = write(tmp_path, export(title="T" * 10_000_000))
    start = time.perf_counter()
    message = refused(history, path)
    assert time.perf_counter() - start < 2.0
    assert message == f"chat.json's title is 10,000,000 characters long; the most is {MAX_TITLE_CHARS:,}"


def test_a_huge_message_is_refused_by_the_file_size_before_it_is_read(history: History, tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    with path.open("w") as out:  # 100 MB of one message
        out.write('{"format": "specchat-conversation", "version": 1, "title": "x", "messages": [')
        out.write('{"role": "user", "content": "')
        for _ in range(100):
            out.write("x" * 1_000_000)
        out.write('"}]}')
    start = time.perf_counter()
    assert refused(history, path).startswith("big.json is 100.0 MB; a conversation file may hold 32 MB at most")
    assert time.perf_counter() - start < 1.0
    one = write(tmp_path, export(messages=[{"role": "user", "content": "y" * (MAX_MESSAGE_CHARS + 1)}]))
    assert (
        refused(history, one)
        == f"chat.json: message 1 is {MAX_MESSAGE_CHARS + 1:,} characters long; the most is 1,000,000"
    )


def test_too_many_messages_are_refused(history: History, tmp_path: Path) -> None:
    many = [{"role": "user", "content": "x"}] * (MAX_MESSAGES + 1)
    assert refused(history, write(tmp_path, export(messages=many))) == (
        f"chat.json holds {MAX_MESSAGES + 1:,} messages; a conversation may hold {MAX_MESSAGES:,} at most"
    )
    million = tmp_path / "million.json"
    million.write_text(json.dumps(export(messages=[{"role": "user", "content": "x"}] * 1_000_000)))
    assert million.stat().st_size > MAX_IMPORT_BYTES  # refused by its size, never parsed
    assert "a conversation file may hold 32 MB at most" in refused(history, million)


def test_the_most_messages_allowed_import_whole_and_fast(history: History, tmp_path: Path) -> None:
    many = [{"role": ("user", "assistant")[i % 2], "content": f"m{i}", "stats": None} for i in range(MAX_MESSAGES)]
    path = write(tmp_path, export(messages=many))
    start = time.perf_counter()
    conv = import_file(history, path)
    assert time.perf_counter() - start < 5.0
    assert [m.content for m in history.messages(conv.id)] == [f"m{i}" for i in range(MAX_MESSAGES)]


@pytest.mark.parametrize(
    "text",
    [
        '{"format": "specchat-conversation", "version": 1, "title": "x", "messages": [], "n": 1' + "0" * 5000 + "}",
        '{"format": "specchat-conversation", "version": 1, "title": "x", "messages": [], "n": NaN}',
        json.dumps(export(options={"system_prompt": 3})),
        json.dumps(export(options={"think": "yes"})),
        json.dumps(export(version=[1] * 1000)),
    ],
)
def test_other_odd_files_are_refused_in_one_line(history: History, tmp_path: Path, text: str) -> None:
    refused(history, write(tmp_path, text))


def test_an_export_of_the_history_reads_back_unchanged(history: History, tmp_path: Path) -> None:
    (kept,) = history.conversations()
    history.add_message(kept.id, "assistant", "Hi <b>there</b>", STATS)
    export_file(history, kept.id, tmp_path / "out.json", as_json=True)
    conv = read_conversation(tmp_path / "out.json")
    assert conv.messages == [("user", "Hello", None), ("assistant", "Hi <b>there</b>", STATS)]


def test_titles_are_bounded_wherever_they_come_from(history: History) -> None:
    conv = history.create_conversation("t" * 100_000)
    assert len(conv.title) == MAX_TITLE_CHARS
    history.rename(conv.id, "r" * 100_000)
    history._db.execute("UPDATE conversations SET title = ? WHERE id = ?", ("z" * 10_000_000, conv.id))  # an old file
    assert {len(c.title) for c in history.conversations()} <= {MAX_TITLE_CHARS, len("Kept")}
    again = history.conversation(conv.id)
    assert again is not None and len(again.title) == MAX_TITLE_CHARS


def test_whether_a_conversation_has_messages_is_known_without_reading_them(history: History) -> None:
    (kept,) = history.conversations()
    empty = history.create_conversation("Empty")
    assert history.has_messages(kept.id) and not history.has_messages(empty.id)
