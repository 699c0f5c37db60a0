"""Exporting a conversation (Markdown as-is, JSON) and importing the JSON back, all or nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_app.store import History
from desktop_app.store.export import ConversationFileError, export_file, import_file, to_markdown

QUESTION = "In Java, what does List<String> mean? And is <b>this</b> bold? a < b && c > d"
STATS = {"tokens": 12, "tokens_per_s": 31.5, "acceptance": 0.75}


@pytest.fixture
def history(tmp_path: Path) -> History:
    store = History(tmp_path / "history.sqlite3")
    yield store
    store.close()


def _chat(history: History) -> int:
    conv = history.create_conversation("Generics & <tags>")
    history.add_message(conv.id, "user", QUESTION)
    history.add_message(conv.id, "assistant", "`List<String>` is a list of strings.", STATS)
    history.set_option(conv.id, "system_prompt", "Be brief.")
    return conv.id


def test_markdown_keeps_the_text_as_it_was(history: History) -> None:
    text = to_markdown(history, _chat(history))

    assert text.startswith("# Generics & <tags>\n")
    assert f"## You\n\n{QUESTION}\n" in text
    assert "## Assistant\n\n`List<String>` is a list of strings.\n" in text
    assert "&lt;" not in text and "&amp;" not in text


def test_json_round_trip_makes_a_new_conversation_with_the_same_messages_and_stats(
    history: History, tmp_path: Path
) -> None:
    original = _chat(history)
    path = tmp_path / "chat.json"
    export_file(history, original, path, as_json=True)

    imported = import_file(history, path)

    assert imported.id != original and imported.title == "Generics & <tags>"
    got = [(m.role, m.content, m.stats) for m in history.messages(imported.id)]
    assert got == [(m.role, m.content, m.stats) for m in history.messages(original)]
    assert got[1][2] == STATS
    assert history.option(imported.id, "system_prompt") == "Be brief."


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps({"title": "x", "messages": []}), 'no "format"'),
        (json.dumps({"format": "specchat-conversation", "version": 99, "title": "x", "messages": []}), "version 99"),
        (
            json.dumps(
                {
                    "format": "specchat-conversation",
                    "version": 1,
                    "title": "half",
                    "messages": [
                        {"role": "user", "content": "one", "stats": None},
                        {"role": "assistant", "content": "two", "stats": None},
                        {"role": "robot", "content": "three", "stats": None},
                    ],
                }
            ),
            "message 3 needs a role",
        ),
    ],
)
def test_a_bad_file_is_refused_and_nothing_is_imported(
    history: History, tmp_path: Path, content: str, reason: str
) -> None:
    _chat(history)
    before = [(c.id, c.title) for c in history.conversations()]
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")

    with pytest.raises(ConversationFileError, match=reason) as info:
        import_file(history, path)

    assert "bad.json" in str(info.value)
    assert [(c.id, c.title) for c in history.conversations()] == before
