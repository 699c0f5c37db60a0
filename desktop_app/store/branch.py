"""Branch a conversation: a new one holding its messages up to one of them (the versions shown),
with their stats, tool calls and the conversation's own options; the original stays as it was."""

from __future__ import annotations

from dataclasses import replace

from desktop_app.store.conversation_import import OPTIONS
from desktop_app.store.history import MAX_TITLE_CHARS, Conversation, History

BRANCH_MARK = " (branch)"


def branch_title(title: str) -> str:
    """``title`` with " (branch)", cut so that the mark stays within the longest title kept."""
    return title[: MAX_TITLE_CHARS - len(BRANCH_MARK)] + BRANCH_MARK


def branch_conversation(history: History, conversation_id: int, message_id: int) -> Conversation:
    """A new conversation with ``conversation_id``'s messages as shown, up to ``message_id``
    included: their texts, stats, files and tool calls, and the conversation's system prompt and Think
    switch. The messages are written in one transaction; KeyError when the message is not on the
    path shown, sqlite3.Error when the history cannot be written."""
    conv = history.conversation(conversation_id)
    path = history.messages(conversation_id)
    upto = next((i for i, m in enumerate(path) if m.id == message_id), None)
    if conv is None or upto is None:
        raise KeyError(f"no message {message_id} shown in conversation {conversation_id}")
    messages = path[: upto + 1]
    options = {name: value for name in OPTIONS if (value := history.option(conversation_id, name)) is not None}
    new = history.add_conversation(branch_title(conv.title), [(m.role, m.content, m.stats) for m in messages], options)
    calls = history.tool_calls.of([m.id for m in messages if m.role == "assistant"])
    for old, copy in zip(messages, history.messages(new.id), strict=True):
        history.attachments.copy(old.id, copy.id)  # your messages' files
        if records := calls.get(old.id):  # an answer's calls and their results: the model reads them in the branch too
            made = history.tool_calls.add(copy.id, [r.as_call() for r in records])
            for record, added in zip(records, made, strict=True):
                history.tool_calls.update(replace(added, status=record.status, result=record.result))
    return new
