"""The message box's unsent text belongs to its conversation, and Edit & resend's editing mode.

The text is kept per conversation in the history (option ``input_draft``) when another one is
opened and when the window closes, and comes back when the conversation is opened again; a new
conversation starts empty. Editing a message puts its text in the box and says so above it, with
Cancel; the message being edited (and the text the box held before) is kept the same way. Your
message edited is sent again; the last answer edited (its Edit) is saved, as a new version of it,
and the next answers read it.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QWidget

from desktop_app.store import History
from desktop_app.ui.conversations.chat_session import ChatSession

DRAFT_OPTION = "input_draft"  # str: the box's unsent text
EDITING_OPTION = "input_editing"  # {"message": id, "before": the box's text before editing}
EDITING_MESSAGE = "Editing your message: the original stays as an earlier version"
EDITING_ANSWER = "Editing the answer: Enter saves it, the original stays as an earlier version"


class EditingBar(QFrame):
    """ "Editing your message" above the message box, with Cancel (objectName ``editingBar``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("editingBar")
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 2, 6, 2)
        self.label = QLabel(EDITING_MESSAGE)
        self.label.setWordWrap(True)
        row.addWidget(self.label, 1)
        self.cancel = QPushButton("Cancel")
        self.cancel.setObjectName("cancelEditing")
        self.cancel.setAccessibleName("Cancel editing")
        row.addWidget(self.cancel)
        self.hide()


class InputDrafts(QObject):
    """Keeps the box's text with its conversation and runs the editing mode (see the module)."""

    def __init__(
        self,
        session: ChatSession,
        box: QPlainTextEdit,
        bar: EditingBar,
        history: History,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.session, self.box, self.bar, self.history = session, box, bar, history
        self.before_edit = ""  # the box's text when editing started, back after Send or Cancel
        self._owner: int | None = None  # the conversation whose text the box holds
        self._opening = False
        session.leaving.connect(self._on_leaving)
        session.conversation_changed.connect(self._on_conversation)
        session.editing_changed.connect(self._on_editing)
        session.view.edit_answer_requested.connect(self.edit_answer)
        bar.cancel.clicked.connect(self.cancel_edit)

    def edit_last(self) -> None:
        """Edit & resend: the last user message's text in the box, in editing mode."""
        before = self.box.toPlainText() if self.session.editing is None else self.before_edit
        text = self.session.start_edit()
        if text is not None:
            self.before_edit = before
            self._set_text(text)

    def edit_answer(self) -> None:
        """Edit the last answer: its text (as shown) in the box, in editing mode; Enter saves it."""
        path, shown = self.session.shown.messages, self.session.view.messages
        if not path or path[-1].role != "assistant" or not shown:
            return
        before = self.box.toPlainText() if self.session.editing is None else self.before_edit
        if self.session.start_edit(path[-1].id) is not None:
            self.before_edit = before
            self._set_text(shown[-1].text)

    def send(self, text: str) -> bool:
        """The box's text sent (Enter, Send): your message, or the answer being edited saved."""
        session = self.session
        at = session.shown.position(session.editing)
        if at is None or session.shown.messages[at].role != "assistant":
            return session.send(text)
        if not text.strip() or session.busy:
            return False
        try:
            version = session.history.add_version(session.shown.messages[at].id, text)
        except sqlite3.Error as exc:
            session.store_failed.emit(f"The answer was not saved: the chat history cannot be written ({exc})")
            return False
        session.shown.replace_from(at, [version])
        session.cancel_edit()
        return True

    @Slot(int)
    def _on_editing(self, message: int) -> None:
        answer = any(m.id == message and m.role == "assistant" for m in self.session.shown.messages)
        self.bar.label.setText(EDITING_ANSWER if answer else EDITING_MESSAGE)
        self.bar.setVisible(bool(message))

    def cancel_edit(self) -> None:
        """Leave editing mode: the box gets back what it held before."""
        self.session.cancel_edit()
        self._set_text(self.before_edit)
        self.before_edit = ""

    def sent(self) -> None:
        """The box's text was sent: it gets back what it held before editing (empty if not)."""
        self._set_text(self.before_edit)
        self.before_edit = ""

    def save(self) -> None:
        """Keep the box's text (and editing mode) with the open conversation (the window closes)."""
        if self._owner is None:
            return
        editing = self.session.editing
        self._write(DRAFT_OPTION, self.box.toPlainText() or None)
        self._write(EDITING_OPTION, {"message": editing, "before": self.before_edit} if editing else None)

    @Slot(int)
    def _on_leaving(self, _conversation: int) -> None:
        self.save()
        self._opening = True

    @Slot(int)
    def _on_conversation(self, conversation: int) -> None:
        self._owner = conversation or None
        if not self._opening:
            return  # stored at its first message: the box's text is being sent
        self._opening = False
        self.before_edit = ""
        draft = self._read(DRAFT_OPTION, "")
        editing = self._read(EDITING_OPTION, None)
        message = editing.get("message") if isinstance(editing, dict) else None
        if isinstance(message, int) and self.session.start_edit(message) is not None:
            self.before_edit = str(editing.get("before", ""))
        self._set_text(str(draft), focus=False)

    def _set_text(self, text: str, focus: bool = True) -> None:
        self.box.setPlainText(text)
        self.box.moveCursor(self.box.textCursor().MoveOperation.End)
        if focus:
            self.box.setFocus()

    def _read(self, name: str, default: Any) -> Any:
        if self._owner is None:
            return default
        try:
            return self.history.option(self._owner, name, default)
        except sqlite3.Error:
            return default

    def _write(self, name: str, value: Any) -> None:
        try:
            if self._owner is not None and self.history.conversation(self._owner) is not None:
                self.history.set_option(self._owner, name, value)
        except sqlite3.Error as exc:
            self.session.store_failed.emit(f"The unsent text of the conversation was not kept ({exc})")
