"""Files attached to messages in the chat history: kept with their message, in the prompt of the
next turns, through versions, branches, deletion, an old file's upgrade, export and import."""

from __future__ import annotations

import base64
import io
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from desktop_app.documents.attachment import Attachment, AttachmentKind
from desktop_app.documents.reading import read_attachment
from desktop_app.engine.messages import IMAGE_MARKER
from desktop_app.store import History
from desktop_app.store.branch import branch_conversation
from desktop_app.store.export import ConversationFileError, export_file, import_file, to_json, to_markdown
from desktop_app.store.message_files import UNSEEN_IMAGE, add_question, prompt_messages

NOTES = "The lighthouse keeper logs the weather at dawn.\nWind: north-east, force 4.\n"


def png(colour: tuple[int, int, int] = (200, 30, 30), size: tuple[int, int] = (40, 24)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def history(tmp_path: Path) -> Iterator[History]:
    store = History(tmp_path / "history.sqlite3")
    yield store
    store.close()


def _files() -> list[Attachment]:
    return [read_attachment("notes.txt", NOTES.encode()), read_attachment("red.png", png())]


def _chat(history: History) -> tuple[int, int]:
    conv = history.create_conversation("Logs")
    question = add_question(history, conv.id, None, "What does the log say?", _files())
    history.add_message(conv.id, "assistant", "North-east wind.")
    return conv.id, question.id


def test_a_message_keeps_its_files_and_the_next_prompt_holds_them(history: History) -> None:
    conv, question = _chat(history)
    kept = history.attachments.of([question])[question]
    assert [(f.name, f.kind, f.mime) for f in kept] == [
        ("notes.txt", AttachmentKind.DOCUMENT, "text/plain"),
        ("red.png", AttachmentKind.IMAGE, "image/png"),
    ]
    assert kept[0].text == NOTES
    assert kept[1].data == png()
    history.add_message(conv, "user", "And the next day?")
    prompt = prompt_messages(history, history.messages(conv))
    first = prompt[0]
    assert 'name="notes.txt"' in first["content"] and "force 4" in first["content"]
    assert first["content"].count(IMAGE_MARKER) == 1 and first.get("images") == [png()]
    assert first["content"].endswith("What does the log say?")
    assert prompt[2] == {"role": "user", "content": "And the next day?"}
    blind = prompt_messages(history, history.messages(conv), sees_images=False)[0]  # a text model goes on
    assert "images" not in blind and IMAGE_MARKER not in blind["content"] and UNSEEN_IMAGE in blind["content"]
    assert "force 4" in blind["content"]


def test_a_reopened_history_still_has_them(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    first = History(path)
    conv, question = _chat(first)
    first.close()
    again = History(path)
    try:
        shown = again.attachments.summaries([question])[question]
        assert [(s.name, s.size) for s in shown] == [("notes.txt", len(NOTES.encode())), ("red.png", len(png()))]
        assert shown[0].data == b"" and shown[1].data == png()  # a document's bytes are read when opened
        opened = again.attachments.one(question, 0)
        assert opened is not None and opened.text.startswith("The lighthouse keeper")
    finally:
        again.close()


def test_deleting_a_message_or_its_conversation_deletes_its_files(history: History) -> None:
    conv, question = _chat(history)
    history.delete_message(question)
    assert history.attachments.of([question]) == {}
    conv, question = _chat(history)
    history.delete(conv)
    assert history._db.execute("SELECT count(*) FROM attachments").fetchone()[0] == 0


def test_an_edited_message_keeps_its_files_and_adds_new_ones(history: History) -> None:
    conv, question = _chat(history)
    extra = read_attachment("more.md", b"# More\nSouth wind later.")
    edited = add_question(history, conv, question, "What does the log say, briefly?", [extra])
    assert [f.name for f in history.attachments.of([edited.id])[edited.id]] == ["notes.txt", "red.png", "more.md"]
    assert [f.name for f in history.attachments.of([question])[question]] == ["notes.txt", "red.png"]  # kept


def test_a_branch_keeps_the_files(history: History) -> None:
    conv, question = _chat(history)
    path = history.messages(conv)
    branch = branch_conversation(history, conv, path[-1].id)
    copied = history.messages(branch.id)[0]
    assert [f.name for f in history.attachments.of([copied.id])[copied.id]] == ["notes.txt", "red.png"]


def test_a_file_from_before_attachments_gets_the_table(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(
        """CREATE TABLE conversations (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL,
           created REAL NOT NULL, updated REAL NOT NULL, leaf_id INTEGER);
        CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id INTEGER NOT NULL,
           role TEXT NOT NULL, content TEXT NOT NULL, stats TEXT, created REAL NOT NULL,
           parent_id INTEGER, active INTEGER NOT NULL DEFAULT 1);
        INSERT INTO conversations VALUES (1, 'Old', 0, 0, 1);
        INSERT INTO messages VALUES (1, 1, 'user', 'hello', NULL, 0, NULL, 1);"""
    )
    db.commit()
    db.close()
    history = History(path)
    try:
        history.attachments.add(1, _files())
        assert len(history.attachments.of([1])[1]) == 2
    finally:
        history.close()


def test_export_and_import_carry_the_files(history: History, tmp_path: Path) -> None:
    conv, _question = _chat(history)
    assert "[attached: notes.txt]" in to_markdown(history, conv)
    data = to_json(history, conv)
    assert data["messages"][0]["attachments"][1]["data"] == base64.b64encode(png()).decode()
    assert "attachments" not in data["messages"][1]
    out = tmp_path / "chat.json"
    export_file(history, conv, out, as_json=True)
    imported = import_file(history, out)
    first = history.messages(imported.id)[0]
    files = history.attachments.of([first.id])[first.id]
    assert [(f.name, f.data) for f in files] == [("notes.txt", NOTES.encode()), ("red.png", png())]


def test_an_imported_bad_attachment_is_refused_in_one_line_and_nothing_is_written(
    history: History, tmp_path: Path
) -> None:
    conv, _question = _chat(history)
    data = to_json(history, conv)
    data["messages"][0]["attachments"][1]["data"] = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 30).decode()
    out = tmp_path / "bad.json"
    out.write_text(json.dumps(data))
    before = history.conversations()
    with pytest.raises(ConversationFileError) as caught:
        import_file(history, out)
    message = str(caught.value)
    assert message.startswith("bad.json: message 1's attachment red.png cannot be attached") and "\n" not in message
    assert history.conversations() == before
    data["messages"][0]["attachments"][0]["data"] = "not base64!"
    out.write_text(json.dumps(data))
    with pytest.raises(ConversationFileError, match="notes.txt is not valid base64"):
        import_file(history, out)
