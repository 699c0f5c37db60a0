"""The sidebar: conversations newest first with when each was last used, with new, rename,
delete, export and search."""

from __future__ import annotations

from datetime import datetime, timedelta

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.store import History
from desktop_app.ui.transcript.message_format import tooltip_html
from desktop_app.ui.window.shortcuts import DELETE_CHAT, RENAME_CHAT, shortcut

TITLE_ROLE = Qt.ItemDataRole.UserRole + 1  # an item's text also holds its date


def friendly_date(timestamp: float, now: datetime | None = None) -> str:
    """When a conversation was last used, as people say it: "Today 14:05", "Yesterday 09:30",
    "3 Dec" this year, "3 Dec 2024" before."""
    when = datetime.fromtimestamp(timestamp)
    today = (now or datetime.now()).date()
    if when.date() == today:
        return f"Today {when:%H:%M}"
    if when.date() == today - timedelta(days=1):
        return f"Yesterday {when:%H:%M}"
    day = f"{when.day} {when:%b}"
    return day if when.year == today.year else f"{day} {when.year}"


class ConversationList(QWidget):
    """Lists the history's conversations; it changes the store directly for rename and delete.

    Signals:
        conversation_selected(int): the user opened this conversation.
        new_requested(): the user wants a new, empty conversation.
        conversation_deleted(int): this conversation was deleted.
        export_requested(int, bool): export this conversation (True: as JSON, False: as Markdown).
    """

    conversation_selected = Signal(int)
    new_requested = Signal()
    conversation_deleted = Signal(int)
    export_requested = Signal(int, bool)

    def __init__(self, history: History, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.history = history
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        top = QHBoxLayout()
        self.new_button = QPushButton("New chat")
        self.new_button.setObjectName("newChatButton")
        self.new_button.setAccessibleName("Start a new conversation")
        self.new_button.clicked.connect(self.new_requested.emit)
        top.addWidget(self.new_button)
        layout.addLayout(top)
        self.search = QLineEdit()
        self.search.setObjectName("conversationSearch")
        self.search.setPlaceholderText("Search conversations")
        self.search.setAccessibleName("Search conversations")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(lambda _t: self.refresh())
        layout.addWidget(self.search)
        self.list = QListWidget()
        self.list.setObjectName("conversationList")
        self.list.setAccessibleName("Conversations")
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.list.itemActivated.connect(self._activated)
        self.list.itemClicked.connect(self._activated)
        layout.addWidget(self.list, 1)
        for declared, slot in ((RENAME_CHAT, self._rename_current), (DELETE_CHAT, self._delete_current)):
            shortcut(self.list, declared, slot, Qt.ShortcutContext.WidgetShortcut)
        self.current_id: int | None = None

    def refresh(self) -> None:
        query = self.search.text().strip()
        rows = self.history.search(query) if query else self.history.conversations()
        self.list.blockSignals(True)
        self.list.clear()
        for conv in rows:
            date = friendly_date(conv.updated)
            item = QListWidgetItem(f"{conv.title}\n{date}")
            item.setData(Qt.ItemDataRole.UserRole, conv.id)
            item.setData(TITLE_ROLE, conv.title)
            item.setToolTip(tooltip_html(f"{conv.title} ({date})"))  # a title's <tags> show as typed
            self.list.addItem(item)
            if conv.id == self.current_id:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)

    def titles(self) -> list[str]:
        return [str(self.list.item(i).data(TITLE_ROLE)) for i in range(self.list.count())]

    def dates(self) -> list[str]:
        """The date line of each listed conversation, in order."""
        return [self.list.item(i).text().split("\n", 1)[1] for i in range(self.list.count())]

    def set_current(self, conversation_id: int | None) -> None:
        self.current_id = conversation_id
        self.refresh()

    def rename(self, conversation_id: int, title: str) -> None:
        self.history.rename(conversation_id, title)
        self.refresh()

    def delete(self, conversation_id: int) -> None:
        self.history.delete(conversation_id)
        if conversation_id == self.current_id:
            self.current_id = None
        self.refresh()
        self.conversation_deleted.emit(conversation_id)

    def _selected_id(self) -> int | None:
        item = self.list.currentItem()
        return int(item.data(Qt.ItemDataRole.UserRole)) if item else None

    def _activated(self, item: QListWidgetItem) -> None:
        conversation_id = int(item.data(Qt.ItemDataRole.UserRole))
        if conversation_id != self.current_id:
            self.current_id = conversation_id
            self.conversation_selected.emit(conversation_id)

    def _rename_current(self) -> None:
        conversation_id = self._selected_id()
        conv = self.history.conversation(conversation_id) if conversation_id else None
        if conv is None:
            return
        title, ok = QInputDialog.getText(self, "Rename conversation", "Title:", text=conv.title)
        if ok and title.strip():
            self.rename(conv.id, title)

    def _delete_current(self) -> None:
        conversation_id = self._selected_id()
        if conversation_id is None:
            return
        answer = QMessageBox.question(self, "Delete conversation", "Delete this conversation and its messages?")
        if answer == QMessageBox.StandardButton.Yes:
            self.delete(conversation_id)

    def context_menu(self, item: QListWidgetItem) -> QMenu:
        """What a right click on ``item`` offers."""
        conversation_id = int(item.data(Qt.ItemDataRole.UserRole))
        menu = QMenu(self)
        menu.addAction("Rename…", self._rename_current)
        menu.addAction("Delete", self._delete_current)
        menu.addSeparator()
        menu.addAction("Export as Markdown…", lambda: self.export_requested.emit(conversation_id, False))
        menu.addAction("Export as JSON…", lambda: self.export_requested.emit(conversation_id, True))
        return menu

    def _menu(self, pos: QPoint) -> None:
        item = self.list.itemAt(pos)
        if item is not None:
            self.context_menu(item).exec(self.list.mapToGlobal(pos))
