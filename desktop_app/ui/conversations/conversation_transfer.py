"""Export a conversation as Markdown or JSON and import a JSON export (File menu and the
conversation list's context menu), and branch one into a new conversation (a message's Branch);
the work itself is :mod:`desktop_app.store.export`, :mod:`desktop_app.store.conversation_import`
and :mod:`desktop_app.store.branch`.

An import runs on a background thread: reading, checking (against the limits declared there,
and that the window can show every message's stats) and writing in one transaction on its own
connection to the history; the window only says how far it got and opens the result.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QMessageBox, QStatusBar, QWidget

from desktop_app.store.branch import branch_conversation
from desktop_app.store.conversation_import import ConversationFileError, read_conversation, write_conversation
from desktop_app.store.errors import StoreError
from desktop_app.store.export import export_file
from desktop_app.store.history import History
from desktop_app.ui.conversations.chat_session import ChatSession
from desktop_app.ui.conversations.conversation_list import ConversationList
from desktop_app.ui.engine.thread_relay import hold
from desktop_app.ui.transcript.message_format import footer_details, format_footer
from desktop_app.ui.widgets.file_dialogs import CONVERSATIONS, ask_open_file, ask_save_file
from desktop_app.ui.widgets.plain_text import plain_box

JSON_FILTER = "SpecChat conversation (*.json)"
MARKDOWN_FILTER = "Markdown (*.md)"


def file_stem(title: str) -> str:
    """A file name for a conversation's title: letters, digits, spaces, '-' and '_' kept."""
    return re.sub(r"[^\w\- ]+", "", title).strip()[:60] or "conversation"


PROGRESS_S = 0.2  # how often an import says how far it got


def _showable(stats: dict[str, Any]) -> None:
    """Raise as the window would when it shows these stats under an answer."""
    format_footer(stats)
    footer_details(stats)


def import_into(history_path: Path, path: Path, progress: Any) -> int:
    """Read, check and write one export (on a background thread): the new conversation's id,
    or ConversationFileError. ``progress(done, total)`` is called now and then."""
    last = [0.0]

    def report(done: int, total: int) -> None:
        if time.monotonic() - last[0] >= PROGRESS_S:
            last[0] = time.monotonic()
            progress(done, total)

    conv = read_conversation(path, report, _showable)
    progress(len(conv.messages), len(conv.messages))
    try:
        history = History(history_path)  # sqlite3 connections belong to one thread: this one's own
    except StoreError as exc:
        raise ConversationFileError(f"{path.name} could not be imported: {exc}") from exc
    try:
        return write_conversation(history, conv).id
    except Exception as exc:  # sqlite3.Error, a full disk: nothing was written
        raise ConversationFileError(f"{path.name} could not be imported: {exc}") from exc
    finally:
        history.close()


class _ImportRelay(QObject):
    """What an import thread emits on (parentless; see ui/engine/thread_relay.py)."""

    progress = Signal(int, int)
    done = Signal(int)
    failed = Signal(str)


class ConversationTransfer(QObject):
    """File → Export as Markdown… / Export as JSON… (the open conversation), File → Import
    conversation…, and the conversation list's Export entries.

    Signals:
        exported(str): a conversation was written to this path.
        imported(int): a new conversation was made from a file (it is opened).
        failed(str): what went wrong, also shown to the user in a message box.
        progress(int, int): an import checked this many messages of so many.

    It exports from and imports into ``history``, opens what it imported in ``session``, has
    ``conversations`` (the sidebar) refreshed, says how far it got in ``status``, and puts its
    actions in ``file_menu``; ``window`` is its dialogs' parent.
    """

    exported = Signal(str)
    imported = Signal(int)
    failed = Signal(str)
    progress = Signal(int, int)

    def __init__(
        self,
        window: QWidget,
        history: History,
        session: ChatSession,
        conversations: ConversationList,
        status: QStatusBar,
        file_menu: QMenu,
    ) -> None:
        super().__init__(window)
        self._window = window
        self._history, self._session, self._conversations, self._status = history, session, conversations, status
        self.export_markdown_action = QAction("Export as &Markdown…", window)
        self.export_json_action = QAction("Export as &JSON…", window)
        self.import_action = QAction("&Import conversation…", window)
        self.import_action.setObjectName("importConversationAction")
        first = file_menu.actions()[0]  # before Quit (and whatever else the File menu holds)
        file_menu.insertActions(first, [self.export_markdown_action, self.export_json_action, self.import_action])
        file_menu.insertSeparator(first)
        self.export_markdown_action.triggered.connect(lambda: self.ask_export(None, as_json=False))
        self.export_json_action.triggered.connect(lambda: self.ask_export(None, as_json=True))
        self.import_action.triggered.connect(self.ask_import)
        conversations.export_requested.connect(lambda cid, as_json: self.ask_export(cid, as_json))
        session.view.branch_requested.connect(self.branch)
        self._importing = ""
        self.progress.connect(self._show_progress)

    def branch(self, position: int) -> None:
        """Branch from here: a new conversation with the messages shown up to the one at
        ``position`` (titled "… (branch)"), opened; the conversation branched from stays as it is."""
        session = self._session
        if session.conversation_id is None or session.busy or position >= len(session.shown.messages):
            return
        try:
            made = branch_conversation(self._history, session.conversation_id, session.shown.messages[position].id)
        except (sqlite3.Error, KeyError) as exc:
            return self._fail(f"The conversation could not be branched: the chat history cannot be written ({exc})")
        session.open(made.id)

    def ask_export(self, conversation_id: int | None, as_json: bool) -> None:
        """Ask where to write the conversation (the open one when None), then write it."""
        conversation_id = conversation_id or self._session.conversation_id
        conv = self._history.conversation(conversation_id) if conversation_id else None
        if conv is None:
            return self._fail("Open a conversation to export first")
        suffix, kind = (".json", JSON_FILTER) if as_json else (".md", MARKDOWN_FILTER)
        path = ask_save_file(self._window, "Export conversation", CONVERSATIONS, file_stem(conv.title) + suffix, kind)
        if path:
            self.export(conv.id, Path(path), as_json)

    def export(self, conversation_id: int, path: Path, as_json: bool) -> bool:
        try:
            export_file(self._history, conversation_id, path, as_json)
        except (OSError, StoreError) as exc:
            self._fail(f"The conversation could not be exported to {path}: {getattr(exc, 'strerror', None) or exc}")
            return False
        self._status.showMessage(f"Exported to {path}", 10_000)
        self.exported.emit(str(path))
        return True

    def ask_import(self) -> None:
        path = ask_open_file(self._window, "Import a conversation", CONVERSATIONS, JSON_FILTER)
        if path:
            self.import_from(Path(path))

    @property
    def importing(self) -> bool:
        return not self.import_action.isEnabled()

    def import_from(self, path: Path) -> None:
        """Make a new conversation from an export on a background thread, then open it; a file
        that cannot be imported leaves the history as it was and says why (``failed``)."""
        if self.importing:
            return
        self.import_action.setEnabled(False)
        name = path.name
        self._status.showMessage(f"Importing {name}…")
        relay = _ImportRelay()
        self._importing = name
        relay.progress.connect(self.progress)  # queued: to this object's thread
        relay.done.connect(self._imported)
        relay.failed.connect(self._import_failed)
        history_path = self._history.path

        def target() -> None:
            try:
                conversation_id = import_into(history_path, path, relay.progress.emit)
            except StoreError as exc:
                relay.failed.emit(str(exc))
            except Exception as exc:  # noqa: BLE001 - a file must never take the window down
                relay.failed.emit(f"{name} could not be imported: {type(exc).__name__}: {exc}")
            else:
                relay.done.emit(conversation_id)
            finally:
                relay.deleteLater()

        thread = threading.Thread(target=target, name="conversation import", daemon=True)
        hold(relay, thread)
        thread.start()

    def _show_progress(self, done: int, total: int) -> None:
        self._status.showMessage(f"Importing {self._importing}: {done:,} of {total:,} messages checked")

    def _imported(self, conversation_id: int) -> None:
        self.import_action.setEnabled(True)
        self._status.clearMessage()
        self._session.open(conversation_id)
        self._conversations.refresh()
        self.imported.emit(conversation_id)

    def _import_failed(self, message: str) -> None:
        self.import_action.setEnabled(True)
        self._status.clearMessage()
        self._fail(message)

    def _fail(self, message: str) -> None:
        self.failed.emit(message)
        ok = QMessageBox.StandardButton.Ok
        box = plain_box(QMessageBox.Icon.Warning, "SpecChat", message, ok, self._window)  # file names as written
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()  # window-modal, and the event loop goes on
