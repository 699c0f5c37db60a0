"""Your messages with the files attached to them: written together (:func:`add_question`), and
read back as the engine takes them (:func:`prompt_messages`: the next turn's prompt includes every
earlier message's files)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace

from desktop_app.documents.attachment import Attachment, AttachmentKind
from desktop_app.engine.api import Message
from desktop_app.store.history import History, StoredMessage
from desktop_app.store.tool_calls import chat_messages

UNSEEN_IMAGE = "(an image the user attached; the model answering now cannot see images)"


def add_question(
    history: History, conversation_id: int, editing: int | None, text: str, files: Sequence[Attachment] = ()
) -> StoredMessage:
    """Your message at the end of the conversation, or a new version of ``editing`` (Edit &
    resend: it keeps the files of the version it replaces), with ``files`` attached after those.
    sqlite3.Error when the history cannot be written: then no message was added."""
    if editing is not None:
        question = history.add_version(editing, text)
    else:
        question = history.add_message(conversation_id, "user", text)
    try:
        if editing is not None:
            history.attachments.copy(editing, question.id)
        if files:
            history.attachments.add(question.id, files)
    except sqlite3.Error:
        history.delete_message(question.id)  # a message without the files it was sent with would mislead
        raise
    return question


def prompt_messages(history: History, path: Sequence[StoredMessage], sees_images: bool = True) -> list[Message]:
    """A conversation's path as the engine takes it (:func:`chat_messages`): answers with their
    tool calls and results, your messages with their files; an image stands as a line saying it
    is there when the model answering cannot see images (``sees_images`` False: a conversation
    with images goes on with a text model)."""
    calls = history.tool_calls.of([m.id for m in path if m.role == "assistant"])
    files = history.attachments.of([m.id for m in path if m.role == "user"])
    if not sees_images:
        files = {i: [unseen(f) for f in kept] for i, kept in files.items()}
    return chat_messages(path, calls, files)


def unseen(file: Attachment) -> Attachment:
    """An image as a model that cannot see it reads it: a line saying it is there (others as they are)."""
    if file.kind is not AttachmentKind.IMAGE:
        return file
    return replace(file, kind=AttachmentKind.DOCUMENT, data=b"", text=UNSEEN_IMAGE)
