"""The files attached to user messages, kept beside them in the chat history (table
``attachments``, made by :func:`~desktop_app.store.history_schema.upgrade`, old files too): each
file as given (``data``, shown again and exported) and the text the model reads of it (``text``:
the whole document, or the passages chosen when it did not fit). A message's attachments go with
it (``ON DELETE CASCADE``); a new version of a message (Edit & resend) keeps them."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from desktop_app.documents.attachment import Attachment, AttachmentKind


@dataclass(frozen=True)
class AttachmentSummary:
    """What the transcript shows of an attachment without reading it: a chip's name, kind and
    size; an image's bytes come along (its thumbnail), a document's text is read when opened."""

    message_id: int
    position: int
    name: str
    kind: AttachmentKind
    mime: str
    size: int  # bytes of the file as given
    chars: int  # characters of the text the model reads (0 for an image)
    data: bytes = b""  # an image's file; empty for a document


def _attachment(row: sqlite3.Row) -> Attachment:
    return Attachment(row["name"], AttachmentKind(row["kind"]), row["mime"], bytes(row["data"]), row["text"])


class Attachments:
    """The ``attachments`` table of one history connection (see :class:`~desktop_app.store.History`)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def add(self, message_id: int, attachments: Sequence[Attachment]) -> None:
        """Attach these files to a message, after those it has."""
        (start,) = self._db.execute(
            "SELECT coalesce(max(position) + 1, 0) FROM attachments WHERE message_id = ?", (message_id,)
        ).fetchone()
        self._db.executemany(
            "INSERT INTO attachments (message_id, position, name, kind, mime, data, text) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (message_id, start + i, a.name, a.kind.value, a.mime, sqlite3.Binary(a.data), a.text)
                for i, a in enumerate(attachments)
            ],
        )

    def copy(self, source_id: int, message_id: int) -> None:
        """Give ``message_id`` the attachments of ``source_id`` (a new version of it keeps them)."""
        self._db.execute(
            "INSERT INTO attachments (message_id, position, name, kind, mime, data, text) "
            "SELECT ?, position, name, kind, mime, data, text FROM attachments WHERE message_id = ?",
            (message_id, source_id),
        )

    def of(self, message_ids: Sequence[int]) -> dict[int, list[Attachment]]:
        """These messages' attachments, whole, by message, in the order they were attached."""
        out: dict[int, list[Attachment]] = {}
        for row in self._rows("name, kind, mime, data, text", message_ids):
            out.setdefault(row["message_id"], []).append(_attachment(row))
        return out

    def summaries(self, message_ids: Sequence[int]) -> dict[int, list[AttachmentSummary]]:
        """What the transcript shows of these messages' attachments (documents' texts left unread)."""
        columns = (
            "name, kind, mime, length(data) AS size, length(text) AS chars, "
            f"CASE kind WHEN '{AttachmentKind.IMAGE.value}' THEN data ELSE x'' END AS data"
        )
        out: dict[int, list[AttachmentSummary]] = {}
        for r in self._rows(columns, message_ids):
            kind = AttachmentKind(r["kind"])
            summary = AttachmentSummary(
                r["message_id"], r["position"], r["name"], kind, r["mime"], r["size"], r["chars"], bytes(r["data"])
            )
            out.setdefault(r["message_id"], []).append(summary)
        return out

    def one(self, message_id: int, position: int) -> Attachment | None:
        """One attachment, whole (a document chip clicked: its text)."""
        row = self._db.execute(
            "SELECT * FROM attachments WHERE message_id = ? AND position = ?", (message_id, position)
        ).fetchone()
        return _attachment(row) if row else None

    def _rows(self, columns: str, message_ids: Sequence[int]) -> list[sqlite3.Row]:
        if not message_ids:
            return []
        marks = ",".join("?" * len(message_ids))
        return self._db.execute(
            f"SELECT message_id, position, {columns} FROM attachments WHERE message_id IN ({marks}) "
            "ORDER BY message_id, position",
            list(message_ids),
        ).fetchall()
