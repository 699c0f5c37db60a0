"""A conversation out of the history and back in: Markdown to read or share, JSON to import again.

The Markdown export writes every message as it was typed or answered (a ``<b>`` stays ``<b>``).
The JSON file holds the messages with their generation stats and the conversation's own options;
importing it checks the whole file before writing anything, and creates a new conversation with
the same messages and stats, or nothing at all.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from desktop_app.store.errors import StoreError
from desktop_app.store.history import Conversation, History

FORMAT = "specchat-conversation"
VERSION = 1
OPTIONS = ("system_prompt", "think")  # the per-conversation options an export carries
ROLES = {"system": "System", "user": "You", "assistant": "Assistant"}


class ConversationFileError(StoreError):
    """A file that cannot be imported as a conversation; the message says why."""


def _conversation(history: History, conversation_id: int) -> Conversation:
    conv = history.conversation(conversation_id)
    if conv is None:
        raise ConversationFileError(f"conversation {conversation_id} does not exist")
    return conv


def to_markdown(history: History, conversation_id: int) -> str:
    """The conversation as Markdown: its title, then each message under who wrote it, as-is."""
    conv = _conversation(history, conversation_id)
    parts = [f"# {conv.title}\n"]
    for message in history.messages(conversation_id):
        parts.append(f"## {ROLES.get(message.role, message.role)}\n\n{message.content}\n")
    return "\n".join(parts)


def to_json(history: History, conversation_id: int) -> dict[str, Any]:
    conv = _conversation(history, conversation_id)
    options = {name: value for name in OPTIONS if (value := history.option(conversation_id, name)) is not None}
    return {
        "format": FORMAT,
        "version": VERSION,
        "title": conv.title,
        "created": conv.created,
        "updated": conv.updated,
        "options": options,
        "messages": [
            {"role": m.role, "content": m.content, "stats": m.stats, "created": m.created}
            for m in history.messages(conversation_id)
        ],
    }


def export_file(history: History, conversation_id: int, path: Path, as_json: bool) -> None:
    """Write the conversation to ``path`` as JSON or Markdown (UTF-8); OSError if it cannot be written."""
    if as_json:
        text = json.dumps(to_json(history, conversation_id), ensure_ascii=False, indent=2)
    else:
        text = to_markdown(history, conversation_id)
    path.write_text(text, encoding="utf-8")


def _checked(data: Any, name: str) -> tuple[str, dict[str, Any], list[tuple[str, str, dict[str, Any] | None]]]:
    """The title, options and messages of an export, or ConversationFileError saying what is wrong."""
    bad = f"{name} is not a SpecChat conversation"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConversationFileError(f'{bad} (it has no "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        raise ConversationFileError(
            f"{name} is a SpecChat conversation of version {data.get('version')!r}, not {VERSION}"
        )
    title, options, messages = data.get("title"), data.get("options", {}), data.get("messages")
    if not isinstance(title, str) or not isinstance(options, dict) or not isinstance(messages, list):
        raise ConversationFileError(f"{bad}: it needs a title, options and a list of messages")
    checked = []
    for number, message in enumerate(messages, 1):
        if not isinstance(message, dict):
            raise ConversationFileError(f"{bad}: message {number} is not an object")
        role, content, stats = message.get("role"), message.get("content"), message.get("stats")
        if role not in ROLES or not isinstance(content, str) or not (stats is None or isinstance(stats, dict)):
            raise ConversationFileError(
                f"{bad}: message {number} needs a role ({', '.join(ROLES)}), a text content and stats or null"
            )
        checked.append((role, content, stats))
    return title, {k: v for k, v in options.items() if k in OPTIONS}, checked


def import_file(history: History, path: Path) -> Conversation:
    """A new conversation from an exported JSON file; ConversationFileError when the file cannot
    be read or is not one (nothing is written then, nor left half-written when the history fails)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConversationFileError(f"{path.name} could not be read: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConversationFileError(f"{path.name} is not a SpecChat conversation (not valid JSON: {exc})") from exc
    title, options, messages = _checked(data, path.name)
    conv = history.create_conversation(title.strip() or "Imported chat")
    try:
        for role, content, stats in messages:
            history.add_message(conv.id, role, content, stats)
        for name, value in options.items():
            history.set_option(conv.id, name, value)
    except sqlite3.Error as exc:
        history.delete(conv.id)  # its messages and options go with it
        raise ConversationFileError(f"{path.name} could not be imported: {exc}") from exc
    return history.conversation(conv.id) or conv
