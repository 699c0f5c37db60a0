"""Chat history in SQLite (WAL mode): conversations and their messages with generation stats.

An answer is written while it streams (:meth:`History.update_message`), so a crash of the
engine or the app keeps the part the user already saw.

The messages of a conversation form a tree: each has a parent (NULL for the first), and the
versions of a message (an edited question, a regenerated answer) are siblings: same parent,
same role. One sibling of each family is ``active``; the active ones from the first message
down are the conversation as shown and as sent to the model (:meth:`History.messages`). Nothing
leaves the history until it is deleted (:meth:`History.delete_message`).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from desktop_app.paths import data_dir, ensure_folder
from desktop_app.store.attachments import Attachments
from desktop_app.store.errors import DataDirError, HistoryDamaged, set_aside
from desktop_app.store.history_schema import DESCEND, FORKS, PATH, SUBTREE, upgrade
from desktop_app.store.tool_calls import ToolCalls

HISTORY_FILE = "history.sqlite3"
# The longest conversation title kept (a longer one is cut when made or renamed, and read cut: a
# 10 MB title once imported stalled every conversation switch for 20-38 s).
MAX_TITLE_CHARS = 500
# A conversation's columns as read: the title cut to MAX_TITLE_CHARS whatever the file holds.
CONVERSATION = f"id, substr(title, 1, {MAX_TITLE_CHARS}) AS title, created, updated"


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
    parent_id: int | None = None
    version: int = 1  # its place among its versions (siblings), from 1, oldest first
    versions: int = 1


def _conversation(row: sqlite3.Row) -> Conversation:
    return Conversation(row["id"], row["title"], row["created"], row["updated"])


def _message(row: sqlite3.Row) -> StoredMessage:
    stats = json.loads(row["stats"]) if row["stats"] else None
    try:
        parent = row["parent_id"]
    except IndexError:  # a file from before versions, read before the window upgraded it
        parent = None
    return StoredMessage(row["id"], row["conversation_id"], row["role"], row["content"], stats, row["created"], parent)


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
            upgrade(self._db)
            self.tool_calls = ToolCalls(self._db)  # the calls answers made, and their results
            self.attachments = Attachments(self._db)  # the files attached to messages
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
        now, title = time.time(), title[:MAX_TITLE_CHARS]
        cur = self._db.execute(
            "INSERT INTO conversations (title, created, updated) VALUES (?, ?, ?)", (title, now, now)
        )
        return Conversation(int(cur.lastrowid or 0), title, now, now)

    def conversation(self, conversation_id: int) -> Conversation | None:
        row = self._db.execute(f"SELECT {CONVERSATION} FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
        return _conversation(row) if row else None

    def conversations(self) -> list[Conversation]:
        """Every conversation, the most recently updated first."""
        rows = self._db.execute(f"SELECT {CONVERSATION} FROM conversations ORDER BY updated DESC, id DESC").fetchall()
        return [_conversation(r) for r in rows]

    def rename(self, conversation_id: int, title: str) -> None:
        title = title.strip()[:MAX_TITLE_CHARS] or "Untitled"
        self._db.execute("UPDATE conversations SET title = ? WHERE id = ?", (title, conversation_id))

    def add_conversation(
        self, title: str, messages: list[tuple[str, str, dict[str, Any] | None]], options: dict[str, Any]
    ) -> Conversation:
        """A new conversation holding ``messages`` (role, text, stats) one after another and its
        ``options``, written in one transaction: all of it, or nothing (sqlite3.Error)."""
        now, parent = time.time(), None
        with self._transaction():
            cur = self._db.execute(
                "INSERT INTO conversations (title, created, updated) VALUES (?, ?, ?)",
                (title[:MAX_TITLE_CHARS], now, now),
            )
            conv = int(cur.lastrowid or 0)
            for role, content, stats in messages:
                parent = self._db.execute(
                    "INSERT INTO messages (conversation_id, parent_id, active, role, content, stats, created) "
                    "VALUES (?, ?, 1, ?, ?, ?, ?)",
                    (conv, parent, role, content, None if stats is None else json.dumps(stats), now),
                ).lastrowid
            self._db.execute("UPDATE conversations SET leaf_id = ? WHERE id = ?", (parent, conv))
            for name, value in options.items():
                self._db.execute(
                    "INSERT INTO conversation_options (conversation_id, name, value) VALUES (?, ?, ?)",
                    (conv, name, json.dumps(value)),
                )
        return Conversation(conv, title[:MAX_TITLE_CHARS], now, now)

    def delete(self, conversation_id: int) -> None:
        self._db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))

    def search(self, text: str) -> list[Conversation]:
        """Conversations whose title or any message contains ``text`` (case-insensitive), newest first."""
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._db.execute(
            f"""SELECT {CONVERSATION} FROM conversations c
               WHERE c.title LIKE ? ESCAPE '\\'
                  OR EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.content LIKE ? ESCAPE '\\')
               ORDER BY updated DESC, id DESC""",
            (pattern, pattern),
        ).fetchall()
        return [_conversation(r) for r in rows]

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
        """A message at the end of the conversation as shown."""
        row = self._db.execute("SELECT leaf_id FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
        with self._transaction():
            return self._insert(conversation_id, row["leaf_id"] if row else None, role, content, stats)

    def add_version(self, message_id: int, content: str, stats: dict[str, Any] | None = None) -> StoredMessage:
        """A new version of a message (same parent, same role), shown from now on in its place;
        the earlier versions and what follows them stay, reachable with :meth:`switch_version`."""
        row = self._row(message_id)
        with self._transaction():
            self._db.execute(
                "UPDATE messages SET active = 0 WHERE conversation_id = ? AND parent_id IS ?",
                (row["conversation_id"], row["parent_id"]),
            )
            return self._insert(row["conversation_id"], row["parent_id"], row["role"], content, stats)

    def versions(self, message_id: int) -> list[StoredMessage]:
        """Every version of a message (itself included), oldest first."""
        row = self._row(message_id)
        rows = self._db.execute(
            "SELECT * FROM messages WHERE conversation_id = ? AND parent_id IS ? ORDER BY id",
            (row["conversation_id"], row["parent_id"]),
        ).fetchall()
        return [replace(_message(r), version=i, versions=len(rows)) for i, r in enumerate(rows, 1)]

    def switch_version(self, message_id: int) -> None:
        """Show this version in its place, and below it the versions chosen there last."""
        row = self._row(message_id)
        conv, parent = row["conversation_id"], row["parent_id"]
        with self._transaction():
            self._db.execute(
                "UPDATE messages SET active = (id = ?) WHERE conversation_id = ? AND parent_id IS ?",
                (message_id, conv, parent),
            )
            self._follow_choices(conv, parent)

    def update_message(self, message_id: int, content: str, stats: dict[str, Any] | None = None) -> None:
        """Replace a message's text (and its stats when given): used while an answer streams."""
        if stats is None:
            self._db.execute("UPDATE messages SET content = ? WHERE id = ?", (content, message_id))
        else:
            self._db.execute(
                "UPDATE messages SET content = ?, stats = ? WHERE id = ?", (content, json.dumps(stats), message_id)
            )

    def delete_message(self, message_id: int) -> None:
        """Delete a message and everything that follows it (in every version below it); when it
        was the version shown, the newest remaining version is shown in its place."""
        row = self._db.execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchone()
        if row is None:
            return
        conv, parent = row["conversation_id"], row["parent_id"]
        with self._transaction():
            self._db.execute(f"DELETE FROM messages WHERE id IN ({SUBTREE})", {"id": message_id, "conv": conv})
            if row["active"]:
                self._db.execute(
                    "UPDATE messages SET active = 1 WHERE id = "
                    "(SELECT max(id) FROM messages WHERE conversation_id = ? AND parent_id IS ?)",
                    (conv, parent),
                )
            shown = self._db.execute("SELECT leaf_id FROM conversations WHERE id = ?", (conv,)).fetchone()
            leaf = shown["leaf_id"] if shown else None
            if leaf is not None and not self._db.execute("SELECT 1 FROM messages WHERE id = ?", (leaf,)).fetchone():
                self._follow_choices(conv, parent)  # the end of the path shown went

    def has_messages(self, conversation_id: int) -> bool:
        """Whether the conversation holds any message (without reading them)."""
        row = self._db.execute("SELECT 1 FROM messages WHERE conversation_id = ? LIMIT 1", (conversation_id,))
        return row.fetchone() is not None

    def messages(self, conversation_id: int) -> list[StoredMessage]:
        """The conversation as shown, first message first: the chosen version of each message,
        with its place among its versions."""
        rows = self._db.execute(PATH, {"conv": conversation_id}).fetchall()
        forks = {
            r["parent_id"]: sorted(int(i) for i in r["ids"].split(","))
            for r in self._db.execute(FORKS, {"conv": conversation_id})
        }
        path = [_message(r) for r in rows]
        for i, m in enumerate(path):
            if (family := forks.get(m.parent_id)) is not None:
                path[i] = replace(m, version=family.index(m.id) + 1, versions=len(family))
        return path

    def _row(self, message_id: int) -> sqlite3.Row:
        row: sqlite3.Row | None = self._db.execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchone()
        if row is None:
            raise KeyError(f"no message {message_id} in the history")
        return row

    def _insert(
        self, conversation_id: int, parent_id: int | None, role: str, content: str, stats: dict[str, Any] | None
    ) -> StoredMessage:
        """A message shown from now on: the new end of the conversation's path (in a transaction)."""
        now = time.time()
        cur = self._db.execute(
            "INSERT INTO messages (conversation_id, parent_id, active, role, content, stats, created) "
            "VALUES (?, ?, 1, ?, ?, ?, ?)",
            (conversation_id, parent_id, role, content, json.dumps(stats) if stats is not None else None, now),
        )
        message_id = int(cur.lastrowid or 0)
        self._db.execute(
            "UPDATE conversations SET leaf_id = ?, updated = ? WHERE id = ?", (message_id, now, conversation_id)
        )
        (count,) = self._db.execute(
            "SELECT count(*) FROM messages WHERE conversation_id = ? AND parent_id IS ?", (conversation_id, parent_id)
        ).fetchone()
        return StoredMessage(message_id, conversation_id, role, content, stats, now, parent_id, count, count)

    def _follow_choices(self, conversation_id: int, parent_id: int | None) -> None:
        """Show the path through ``parent_id``'s chosen child, down the versions chosen last."""
        end = self._db.execute(DESCEND, {"conv": conversation_id, "parent": parent_id}).fetchone()
        self._db.execute(
            "UPDATE conversations SET leaf_id = ? WHERE id = ?", (end["id"] if end else parent_id, conversation_id)
        )

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
