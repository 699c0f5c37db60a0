"""A conversation out of the history and back in: Markdown to read or share, JSON to import again.

The Markdown export writes every message as it was typed or answered (a ``<b>`` stays ``<b>``).
The JSON file holds the messages with their generation stats and the conversation's own options;
importing it (:mod:`desktop_app.store.conversation_import`) checks the whole file before writing
anything, and creates a new conversation with the same messages and stats, or nothing at all.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from desktop_app.store.attachment_transfer import files_json
from desktop_app.store.conversation_import import (
    FORMAT,
    OPTIONS,
    VERSION,
    ConversationFileError,
    Progress,
    read_conversation,
    write_conversation,
)
from desktop_app.store.history import Conversation, History

__all__ = ["ConversationFileError", "export_file", "import_file", "to_json", "to_markdown"]
ROLES = {"system": "System", "user": "You", "assistant": "Assistant"}


def _conversation(history: History, conversation_id: int) -> Conversation:
    conv = history.conversation(conversation_id)
    if conv is None:
        raise ConversationFileError(f"conversation {conversation_id} does not exist")
    return conv


def to_markdown(history: History, conversation_id: int) -> str:
    """The conversation as Markdown: its title, then each message under who wrote it, as-is."""
    conv = _conversation(history, conversation_id)
    parts = [f"# {conv.title}\n"]
    path = history.messages(conversation_id)
    files = history.attachments.summaries([m.id for m in path if m.role == "user"])
    for message in path:
        attached = "".join(f"[attached: {f.name}]\n\n" for f in files.get(message.id, []))
        parts.append(f"## {ROLES.get(message.role, message.role)}\n\n{attached}{message.content}\n")
    return "\n".join(parts)


def to_json(history: History, conversation_id: int) -> dict[str, Any]:
    conv = _conversation(history, conversation_id)
    options = {name: value for name in OPTIONS if (value := history.option(conversation_id, name)) is not None}
    path = history.messages(conversation_id)
    files = history.attachments.of([m.id for m in path if m.role == "user"])
    return {
        "format": FORMAT,
        "version": VERSION,
        "title": conv.title,
        "created": conv.created,
        "updated": conv.updated,
        "options": options,
        "messages": [
            {"role": m.role, "content": m.content, "stats": m.stats, "created": m.created}
            | ({"attachments": files_json(files[m.id])} if m.id in files else {})
            for m in path
        ],
    }


def export_file(history: History, conversation_id: int, path: Path, as_json: bool) -> None:
    """Write the conversation to ``path`` as JSON or Markdown (UTF-8); OSError if it cannot be written."""
    if as_json:
        text = json.dumps(to_json(history, conversation_id), ensure_ascii=False, indent=2)
    else:
        text = to_markdown(history, conversation_id)
    path.write_text(text, encoding="utf-8")


def import_file(history: History, path: Path, progress: Progress | None = None) -> Conversation:
    """A new conversation from an exported JSON file, checked whole and written in one
    transaction (:mod:`desktop_app.store.conversation_import`); ConversationFileError when the
    file cannot be read, is not one or passes a limit: nothing is written then."""
    conv = read_conversation(path, progress)
    try:
        return write_conversation(history, conv)
    except sqlite3.Error as exc:
        raise ConversationFileError(f"{path.name} could not be imported: {exc}") from exc
