"""The open conversation's path as the transcript shows it, with ``< 2/3 >`` on each message
that has versions (:mod:`desktop_app.ui.transcript.version_switch`)."""

from __future__ import annotations

import sqlite3

from PySide6.QtCore import QObject, Signal, Slot

from desktop_app.store import History, StoredMessage
from desktop_app.ui.transcript.chat_view import ChatView, MessageWidget
from desktop_app.ui.transcript.version_switch import VersionSwitch, attach_switch


class ShownPath(QObject):
    """The messages of the path shown, oldest first (those behind "show earlier" included), in
    step with the transcript's widgets.

    Signals:
        switched(): another version of a message is shown (and the path below it).
        failed(str): the history could not be read or written; what was not done.
    """

    switched = Signal()
    failed = Signal(str)

    def __init__(self, view: ChatView, history: History, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self.history = history
        self.messages: list[StoredMessage] = []
        self._switching = True
        view.message_shown.connect(self._on_shown)

    def position(self, message_id: int | None) -> int | None:
        """Where a message is on the path (None: not on it)."""
        return next((i for i, m in enumerate(self.messages) if m.id == message_id), None)

    def show(self, messages: list[StoredMessage]) -> None:
        """Show a whole path (a conversation opened)."""
        self.messages = list(messages)
        self.view.show_messages([(m.role, m.content, m.stats) for m in self.messages])

    def replace_from(self, position: int, messages: list[StoredMessage]) -> None:
        """Show ``messages`` in place of the path from ``position`` on; the widgets above stay."""
        keep = position - self.view.earlier_count
        if keep < 1:  # none of the widgets shown stays: show the path anew
            self.show(self.messages[:position] + messages)
            return
        self.messages = self.messages[:position] + messages
        while len(self.view.messages) > keep:
            self.view.remove_last()
        for m in messages:
            self.view.add_message(m.role, m.content, m.stats)

    def switch(self, message_id: int, step: int) -> None:
        """Show the version ``step`` away from this message's (``< >``), and the path below it."""
        position = self.position(message_id)
        if not self._switching or position is None:
            return
        try:
            versions = self.history.versions(message_id)
            index = [v.id for v in versions].index(message_id) + step
            if not 0 <= index < len(versions):
                return
            self.history.switch_version(versions[index].id)
            path = self.history.messages(versions[index].conversation_id)
        except sqlite3.Error as exc:
            self.failed.emit(f"The other version cannot be shown: the chat history cannot be used ({exc})")
            return
        self.replace_from(position, path[position:])
        self.switched.emit()

    def allow_switching(self, on: bool) -> None:
        """Off while an answer streams (the path must not change under it)."""
        self._switching = on
        for switch in self.view.findChildren(VersionSwitch):
            switch.allow(on)

    @Slot(object)
    def _on_shown(self, widget: MessageWidget) -> None:
        position = self.view.earlier_count + self.view.messages.index(widget)
        if position >= len(self.messages):
            return
        message = self.messages[position]
        switch = attach_switch(widget, message)
        if switch is not None:
            switch.step.connect(lambda step: self.switch(message.id, step))
            switch.allow(self._switching)
