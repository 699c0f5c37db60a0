"""Chat history in SQLite (WAL mode): conversations and their messages with generation stats.

An answer is written while it streams (:meth:`History.update_message`), so a crash of the
engine or the app keeps the part the user already saw.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop_app.paths import data_dir, ensure_folder
from desktop_app.store.errors import DataDirError, HistoryDamaged, set_aside

HISTORY_FILE = "history.sqlite3"
SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
    content TEXT NOT NULL,
    stats TEXT,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_conversation ON messages(conversation_id, id);
CREATE TABLE IF NOT EXISTS conversation_options (
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (conversation_id, name)
);
"""


@dataclass(frozen=True)
class Conversation:
    id: int
    title: str
    created: float
    updated: float


@dataclass(frozen=True)
class StoredMessage:
    id: int
    conversation_id: int
    role: str
    content: str
    stats: dict[str, Any] | None = field(default=None)
    created: float = 0.0


def _conversation(row: sqlite3.Row) -> Conversation:
    return Conversation(row["id"], row["title"], row["created"], row["updated"])


def _message(row: sqlite3.Row) -> StoredMessage:
    stats = json.loads(row["stats"]) if row["stats"] else None
    return StoredMessage(row["id"], row["conversation_id"], row["role"], row["content"], stats, row["created"])


def check_readable(path: Path) -> None:
    """Raise HistoryDamaged unless ``path`` opens as a database that passes SQLite's quick
    check. Opened read-only and immutable, so nothing is written to the file."""
    try:
        probe = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = probe.execute("PRAGMA quick_check").fetchall()
        finally:
            probe.close()
    except sqlite3.OperationalError as exc:
        if "unable to open" in str(exc) or "readonly" in str(exc):
            raise DataDirError(f"SpecChat cannot open its chat history {path}: {exc}") from exc
        raise HistoryDamaged(path, str(exc)) from exc
    except sqlite3.DatabaseError as exc:
        raise HistoryDamaged(path, str(exc)) from exc
    problems = [str(r[0]) for r in rows if str(r[0]) != "ok"]
    if problems:
        raise HistoryDamaged(path, f"the database is damaged ({problems[0]})")


def read_messages(path: Path) -> list[StoredMessage]:
    """Every message of every conversation, oldest first, through a read-only connection (for
    another process: a WAL reader never waits for the window's writes, nor blocks them). A
    history that does not exist yet has none; sqlite3.Error when it cannot be read."""
    if not path.exists():
        return []
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        db.row_factory = sqlite3.Row
        return [_message(r) for r in db.execute("SELECT * FROM messages ORDER BY id")]
    finally:
        db.close()


def start_fresh(path: Path | None = None) -> tuple[History, Path]:
    """Keep a damaged history as ``<file>.broken-<time>`` (byte for byte) and open a new one."""
    path = path or data_dir() / HISTORY_FILE
    kept = set_aside(path, companions=("-wal", "-shm"))
    return History(path), kept


class History:
    """Conversations, newest first. One instance per thread (sqlite3 connections are not shared)."""

    def __init__(self, path: Path | None = None) -> None:
        """Open (or create) the history; raises HistoryDamaged for a file that is not a sound
        database (checked read-only first, so the file is never changed) and DataDirError when
        its folder cannot be written."""
        self.path = path or data_dir() / HISTORY_FILE
        ensure_folder(self.path.parent)  # DataDirError naming the folder and what to do
        if self.path.exists():
            check_readable(self.path)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None)
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise DataDirError(
                    f"SpecChat cannot write its chat history in {self.path.parent} ({exc}): make the folder "
                    f"writable, or set SPECCHAT_HOME to a writable folder"
                ) from exc
            raise HistoryDamaged(self.path, str(exc)) from exc

    def close(self) -> None:
        self._db.close()

    @property
    def journal_mode(self) -> str:
        return str(self._db.execute("PRAGMA journal_mode").fetchone()[0])

    # ------------------------------------------------------------------ conversations
    def create_conversation(self, title: str = "New chat") -> Conversation:
        now = time.time()
        cur = self._db.execute(
            "INSERT INTO conversations (title, created, updated) VALUES (?, ?, ?)", (title, now, now)
        )
        return Conversation(int(cur.lastrowid or 0), title, now, now)

    def conversation(self, conversation_id: int) -> Conversation | None:
        row = self._db.execute("SELECT * FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
        return _conversation(row) if row else None

    def conversations(self) -> list[Conversation]:
        """Every conversation, the most recently updated first."""
        rows = self._db.execute("SELECT * FROM conversations ORDER BY updated DESC, id DESC").fetchall()
        return [_conversation(r) for r in rows]

    def rename(self, conversation_id: int, title: str) -> None:
        title = title.strip() or "Untitled"
        self._db.execute("UPDATE conversations SET title = ? WHERE id = ?", (title, conversation_id))

    def delete(self, conversation_id: int) -> None:
        self._db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))

    def search(self, text: str) -> list[Conversation]:
        """Conversations whose title or any message contains ``text`` (case-insensitive), newest first."""
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._db.execute(
            """SELECT * FROM conversations c
               WHERE c.title LIKE ? ESCAPE '\\'
                  OR EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.content LIKE ? ESCAPE '\\')
               ORDER BY updated DESC, id DESC""",
            (pattern, pattern),
        ).fetchall()
        return [_conversation(r) for r in rows]

    def _touch(self, conversation_id: int) -> None:
        self._db.execute("UPDATE conversations SET updated = ? WHERE id = ?", (time.time(), conversation_id))

    # ------------------------------------------------------------------ per-conversation options
    def option(self, conversation_id: int, name: str, default: Any = None) -> Any:
        """A conversation's own setting (its system prompt, its Think switch, the unsent text in
        its input box), JSON-decoded; ``default`` when it has none."""
        row = self._db.execute(
            "SELECT value FROM conversation_options WHERE conversation_id = ? AND name = ?", (conversation_id, name)
        ).fetchone()
        return json.loads(row["value"]) if row else default

    def set_option(self, conversation_id: int, name: str, value: Any) -> None:
        """Set a conversation's own setting (None removes it, so the default applies again)."""
        if value is None:
            self._db.execute(
                "DELETE FROM conversation_options WHERE conversation_id = ? AND name = ?", (conversation_id, name)
            )
        else:
            self._db.execute(
                "INSERT INTO conversation_options (conversation_id, name, value) VALUES (?, ?, ?) "
                "ON CONFLICT (conversation_id, name) DO UPDATE SET value = excluded.value",
                (conversation_id, name, json.dumps(value)),
            )

    # ------------------------------------------------------------------ messages
    def add_message(
        self, conversation_id: int, role: str, content: str, stats: dict[str, Any] | None = None
    ) -> StoredMessage:
        now = time.time()
        cur = self._db.execute(
            "INSERT INTO messages (conversation_id, role, content, stats, created) VALUES (?, ?, ?, ?, ?)",
            (conversation_id, role, content, json.dumps(stats) if stats is not None else None, now),
        )
        self._touch(conversation_id)
        return StoredMessage(int(cur.lastrowid or 0), conversation_id, role, content, stats, now)

    def update_message(self, message_id: int, content: str, stats: dict[str, Any] | None = None) -> None:
        """Replace a message's text (and its stats when given): used while an answer streams."""
        if stats is None:
            self._db.execute("UPDATE messages SET content = ? WHERE id = ?", (content, message_id))
        else:
            self._db.execute(
                "UPDATE messages SET content = ?, stats = ? WHERE id = ?", (content, json.dumps(stats), message_id)
            )

    def delete_message(self, message_id: int) -> None:
        self._db.execute("DELETE FROM messages WHERE id = ?", (message_id,))

    def messages(self, conversation_id: int) -> list[StoredMessage]:
        rows = self._db.execute(
            "SELECT * FROM messages WHERE conversation_id = ? ORDER BY id", (conversation_id,)
        ).fetchall()
        return [_message(r) for r in rows]
