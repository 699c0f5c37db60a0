"""The tool calls an answer made and what became of each (its result, or why it did not run),
kept beside the answer in the chat history so a reopened conversation shows them and the model is
sent them again (an assistant message with ``tool_calls``, then one ``tool`` message per call)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from desktop_app.documents.attachment import Attachment
from desktop_app.documents.prompt_text import to_message
from desktop_app.engine.api import Message, MessageToolCall

SCHEMA = """
CREATE TABLE IF NOT EXISTS tool_calls (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    call_id TEXT NOT NULL,
    name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    status TEXT NOT NULL,
    result TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (message_id, position)
);
"""


class CallStatus(StrEnum):
    """Where a call stands; the words the card shows."""

    WAITING = "waiting for you"  # to be allowed or denied
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"  # the server could not run it, or said it failed
    DENIED = "denied"
    STOPPED = "stopped"


# What the model reads for a call that gave no result (its ``tool`` message).
NO_RESULT = {
    CallStatus.WAITING: "The call was not run.",
    CallStatus.RUNNING: "The call was interrupted.",
    CallStatus.DENIED: "The user denied this call.",
    CallStatus.STOPPED: "The user stopped this call.",
}


@dataclass(frozen=True)
class ToolCallRecord:
    """One call of an answer (``message_id``), the ``position``-th it made."""

    message_id: int
    position: int
    call_id: str
    name: str
    arguments: str  # JSON text, as the model wrote it
    status: CallStatus = CallStatus.WAITING
    result: str = ""

    def as_call(self) -> MessageToolCall:
        return {"id": self.call_id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}

    def as_message(self) -> Message:
        """The ``tool`` message the model reads: the result, or why there is none."""
        text = self.result if self.status in (CallStatus.DONE, CallStatus.FAILED) else NO_RESULT[self.status]
        return {"role": "tool", "content": text, "tool_call_id": self.call_id, "name": self.name}


class ToolCalls:
    """The ``tool_calls`` table of one history connection (see :class:`~desktop_app.store.History`)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        db.executescript(SCHEMA)

    def add(self, message_id: int, calls: Sequence[MessageToolCall]) -> list[ToolCallRecord]:
        """The calls an answer made, waiting to be allowed."""
        records = [
            ToolCallRecord(message_id, i, c["id"], c["function"]["name"], c["function"]["arguments"])
            for i, c in enumerate(calls)
        ]
        self._db.executemany(
            "INSERT OR REPLACE INTO tool_calls (message_id, position, call_id, name, arguments, status, result) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(r.message_id, r.position, r.call_id, r.name, r.arguments, r.status.value, r.result) for r in records],
        )
        return records

    def update(self, record: ToolCallRecord) -> None:
        self._db.execute(
            "UPDATE tool_calls SET status = ?, result = ? WHERE message_id = ? AND position = ?",
            (record.status.value, record.result, record.message_id, record.position),
        )

    def of(self, message_ids: Sequence[int]) -> dict[int, list[ToolCallRecord]]:
        """The calls of these answers, by answer, in the order they were made."""
        if not message_ids:
            return {}
        marks = ",".join("?" * len(message_ids))
        rows = self._db.execute(
            f"SELECT * FROM tool_calls WHERE message_id IN ({marks}) ORDER BY message_id, position",
            list(message_ids),
        ).fetchall()
        out: dict[int, list[ToolCallRecord]] = {}
        for r in rows:
            out.setdefault(r["message_id"], []).append(
                ToolCallRecord(
                    r["message_id"],
                    r["position"],
                    r["call_id"],
                    r["name"],
                    r["arguments"],
                    CallStatus(r["status"]),
                    r["result"],
                )  # fmt: skip
            )
        return out


class PathMessage(Protocol):
    """What :func:`chat_messages` reads of a stored message (a
    :class:`~desktop_app.store.history.StoredMessage`): this module needs no more of the history."""

    @property
    def id(self) -> int: ...

    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...


def chat_messages(
    path: Sequence[PathMessage],
    calls: dict[int, list[ToolCallRecord]],
    attached: Mapping[int, Sequence[Attachment]] | None = None,
) -> list[Message]:
    """A conversation's path as the engine takes it: an answer that made calls carries them and is
    followed by their results; an answer with neither text nor calls is left out; a message with
    files ``attached`` carries them (documents' texts, images: :func:`to_message`)."""
    out: list[Message] = []
    for m in path:
        made = calls.get(m.id, []) if m.role == "assistant" else []
        if not m.content and m.role == "assistant" and not made:
            continue
        files = attached.get(m.id) if attached else None
        message: Message = to_message(m.role, m.content, files) if files else {"role": m.role, "content": m.content}
        if made:
            message["tool_calls"] = [c.as_call() for c in made]
        out.append(message)
        out.extend(c.as_message() for c in made)
    return out
