"""The "Think" switch next to the message box: reasoning on or off for a thinking model whose
chat template has a switch (``enable_thinking``, or gpt-oss's reasoning effort), kept per
conversation in the history (option "think").

Shown only while the loaded target has a switch (:attr:`ModelInfo.has_think_switch`); it then
starts at the template's own default in a conversation that has no choice of its own. A choice
made before a new conversation's first message is kept for that conversation once it exists.
"""

from __future__ import annotations

import sqlite3

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QCheckBox, QWidget

from desktop_app.engine.api import LoadedModels
from desktop_app.store import History
from desktop_app.ui.conversations.chat_session import ChatSession
from desktop_app.ui.engine.engine_client import EngineClient

OPTION = "think"


class ThinkSwitch(QCheckBox):
    """``choice()`` is what the next answer's request carries (None: no switch, the template's way)."""

    def __init__(self, history: History, parent: QWidget | None = None) -> None:
        super().__init__("Think", parent)
        self.setObjectName("thinkSwitch")
        self.setAccessibleName("Think before answering")
        self.setToolTip("Let the model reason before it answers (its reasoning folds above the answer)")
        self._history = history
        self._conversation: int | None = None
        self._unsaved: bool | None = None  # chosen in a new conversation, saved at its first message
        self._default: bool | None = None  # the loaded template's default; None: it has no switch
        self.hide()
        self.toggled.connect(self._on_toggled)

    def follow(self, client: EngineClient, session: ChatSession) -> None:
        """Show what the loaded model and the open conversation say."""
        client.model_loaded.connect(self._on_model_loaded)
        session.conversation_changed.connect(self.show_conversation)
        self.show_conversation(session.conversation_id or 0)

    def choice(self) -> bool | None:
        return None if self._default is None else self.isChecked()

    @Slot(object)
    def _on_model_loaded(self, loaded: LoadedModels) -> None:
        self._default = loaded.target.think_default
        self.setVisible(loaded.target.has_think_switch)
        self._refresh()

    @Slot(int)
    def show_conversation(self, conversation_id: int) -> None:
        if conversation_id and self._unsaved is not None and self._just_created(conversation_id):
            self._save(conversation_id, self._unsaved)
        self._unsaved = None
        self._conversation = conversation_id or None
        self._refresh()

    def _just_created(self, conversation_id: int) -> bool:
        """The new conversation was just stored (at its first message, before the message)."""
        try:
            return self._conversation is None and not self._history.has_messages(conversation_id)
        except sqlite3.Error:
            return False

    def _refresh(self) -> None:
        on = self._default
        if self._conversation is not None:
            try:
                on = self._history.option(self._conversation, OPTION, on)
            except sqlite3.Error:
                pass  # unreadable history: the template's default
        self.blockSignals(True)
        self.setChecked(bool(on))
        self.blockSignals(False)

    def _on_toggled(self, on: bool) -> None:
        if self._conversation is None:
            self._unsaved = on
        else:
            self._save(self._conversation, on)

    def _save(self, conversation_id: int, on: bool) -> None:
        try:
            self._history.set_option(conversation_id, OPTION, on)
        except sqlite3.Error:
            pass  # the switch still shows the choice and the next answer follows it
