"""Export a conversation as Markdown or JSON and import a JSON export (File menu and the
conversation list's context menu); the work itself is :mod:`desktop_app.store.export`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

from desktop_app.store.errors import StoreError
from desktop_app.store.export import export_file, import_file

if TYPE_CHECKING:
    from desktop_app.ui.main_window import MainWindow

JSON_FILTER = "SpecChat conversation (*.json)"
MARKDOWN_FILTER = "Markdown (*.md)"


def file_stem(title: str) -> str:
    """A file name for a conversation's title: letters, digits, spaces, '-' and '_' kept."""
    return re.sub(r"[^\w\- ]+", "", title).strip()[:60] or "conversation"


class ConversationTransfer(QObject):
    """File → Export as Markdown… / Export as JSON… (the open conversation), File → Import
    conversation…, and the conversation list's Export entries.

    Signals:
        exported(str): a conversation was written to this path.
        imported(int): a new conversation was made from a file (it is opened).
        failed(str): what went wrong, also shown to the user in a message box.
    """

    exported = Signal(str)
    imported = Signal(int)
    failed = Signal(str)

    def __init__(self, window: MainWindow, file_menu: QMenu) -> None:
        super().__init__(window)
        self._window = window
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
        window.conversations.export_requested.connect(lambda cid, as_json: self.ask_export(cid, as_json))

    def ask_export(self, conversation_id: int | None, as_json: bool) -> None:
        """Ask where to write the conversation (the open one when None), then write it."""
        conversation_id = conversation_id or self._window.session.conversation_id
        conv = self._window.history.conversation(conversation_id) if conversation_id else None
        if conv is None:
            return self._fail("Open a conversation to export first")
        suffix, kind = (".json", JSON_FILTER) if as_json else (".md", MARKDOWN_FILTER)
        path, _filter = QFileDialog.getSaveFileName(
            self._window, "Export conversation", file_stem(conv.title) + suffix, kind
        )
        if path:
            self.export(conv.id, Path(path), as_json)

    def export(self, conversation_id: int, path: Path, as_json: bool) -> bool:
        try:
            export_file(self._window.history, conversation_id, path, as_json)
        except (OSError, StoreError) as exc:
            self._fail(f"The conversation could not be exported to {path}: {getattr(exc, 'strerror', None) or exc}")
            return False
        self._window.status.showMessage(f"Exported to {path}", 10_000)
        self.exported.emit(str(path))
        return True

    def ask_import(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(self._window, "Import a conversation", "", JSON_FILTER)
        if path:
            self.import_from(Path(path))

    def import_from(self, path: Path) -> int | None:
        """Make a new conversation from an export and open it; None (and a message) when it fails."""
        try:
            conv = import_file(self._window.history, path)
        except StoreError as exc:
            self._fail(str(exc))
            return None
        self._window.session.open(conv.id)
        self._window.conversations.refresh()
        self.imported.emit(conv.id)
        return conv.id

    def _fail(self, message: str) -> None:
        self.failed.emit(message)
        box = QMessageBox(QMessageBox.Icon.Warning, "SpecChat", message, QMessageBox.StandardButton.Ok, self._window)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()  # window-modal, and the event loop goes on
