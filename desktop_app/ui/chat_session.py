"""The open conversation: what is shown, what is stored, and what the engine is asked.

Only this object writes messages to the history while chatting. The answer being streamed is
saved every SAVE_INTERVAL_MS and at the end, so a crash keeps what the user saw.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from desktop_app.engine.api import FinishReason, GenerateRequest, Message
from desktop_app.engine.stats import GenerationStats
from desktop_app.engine_process.protocol import Done
from desktop_app.store import History
from desktop_app.ui.chat_view import ChatView, MessageWidget
from desktop_app.ui.engine_client import EngineClient, GenerationHandle
from desktop_app.ui.system_prompt import conversation_prompt

SAVE_INTERVAL_MS = 500
TITLE_LENGTH = 48


def title_for(text: str) -> str:
    """A conversation title from its first message: one line, no Markdown marks, at most TITLE_LENGTH."""
    line = " ".join(re.sub(r"[`*#>_]+", " ", text).split())
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1].rstrip() + "…"


class ChatSession(QObject):
    """Sends the conversation to the engine and streams the answer into the view and the store.

    Signals:
        busy_changed(bool): an answer started (True) or ended (False).
        conversation_changed(int): the open conversation (0: a new one not stored yet).
        error(str): something to tell the user (a failed answer).
        store_failed(str): the history could not be read or written; what was not saved.
    """

    busy_changed = Signal(bool)
    conversation_changed = Signal(int)
    error = Signal(str)
    store_failed = Signal(str)

    def __init__(
        self,
        client: EngineClient,
        history: History,
        view: ChatView,
        request_for: Callable[[list[Message], str | None], GenerateRequest],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.client = client
        self.history = history
        self.view = view
        self.request_for = request_for
        self.conversation_id: int | None = None
        self.handle: GenerationHandle | None = None
        self.answer: MessageWidget | None = None
        self.answer_id: int | None = None
        self._unsaved = False
        self._save_error_shown = False
        self._save_timer = QTimer(self)
        self._save_timer.setInterval(SAVE_INTERVAL_MS)
        self._save_timer.timeout.connect(self._save_partial)
        client.engine_crashed.connect(self._on_crash)
        view.regenerate_requested.connect(self.regenerate)

    @property
    def busy(self) -> bool:
        return self.handle is not None

    # ------------------------------------------------------------------ conversations
    def open(self, conversation_id: int | None) -> None:
        """Show a stored conversation (None: a fresh one, stored at its first message)."""
        if self.busy:
            self.cancel()
            self._end_answer({"finish_reason": FinishReason.CANCELLED.value})
        self.view.clear()
        conv = self.history.conversation(conversation_id) if conversation_id else None
        self.conversation_id = conv.id if conv else None
        if conv is not None:
            self.view.show_messages([(m.role, m.content, m.stats) for m in self.history.messages(conv.id)])
        self.conversation_changed.emit(self.conversation_id or 0)

    def engine_messages(self) -> list[Message]:
        if self.conversation_id is None:
            return []
        return [
            Message(role=m.role, content=m.content)
            for m in self.history.messages(self.conversation_id)
            if m.content or m.role != "assistant"
        ]

    # ------------------------------------------------------------------ actions
    def send(self, text: str) -> bool:
        """Add a user message and start the answer; False when busy or the text is empty."""
        text = text.strip()
        if not text or self.busy:
            return False
        try:
            if self.conversation_id is None:
                self.conversation_id = self.history.create_conversation(title_for(text)).id
                self.conversation_changed.emit(self.conversation_id)
            self.history.add_message(self.conversation_id, "user", text)
            messages = self.engine_messages()
            answer_id = self.history.add_message(self.conversation_id, "assistant", "").id
        except sqlite3.Error as exc:
            self.store_failed.emit(
                f"Your message was not sent: the chat history cannot be written ({exc}); your text is still in the box"
            )
            return False
        self.view.add_message("user", text)
        self._start_answer(messages, answer_id)
        return True

    def regenerate(self) -> None:
        """Drop the last answer and generate it again."""
        if self.busy or self.conversation_id is None:
            return
        try:
            stored = self.history.messages(self.conversation_id)
            if not stored or stored[-1].role != "assistant":
                return
            self.history.delete_message(stored[-1].id)
            messages = self.engine_messages()
            answer_id = self.history.add_message(self.conversation_id, "assistant", "").id
        except sqlite3.Error as exc:
            self.store_failed.emit(f"The answer was not regenerated: the chat history cannot be written ({exc})")
            return
        self.view.remove_last("assistant")
        self._start_answer(messages, answer_id)

    def take_last_user_message(self) -> str | None:
        """Remove the last user message (and its answer) for editing; returns its text."""
        if self.busy or self.conversation_id is None:
            return None
        stored = self.history.messages(self.conversation_id)
        users = [i for i, m in enumerate(stored) if m.role == "user"]
        if not users:
            return None
        text = stored[users[-1]].content
        for message in stored[users[-1] :]:
            self.history.delete_message(message.id)
            self.view.remove_last()
        return text

    def cancel(self) -> None:
        if self.handle is not None:
            self.client.cancel(self.handle)

    def save_now(self) -> None:
        """Write the streaming answer's text so far (the window is closing)."""
        self._unsaved = True
        self._save_partial()

    # ------------------------------------------------------------------ streaming
    def _start_answer(self, messages: list[Message], answer_id: int) -> None:
        self.answer_id = answer_id
        self._save_error_shown = False
        self.answer = self.view.add_message("assistant")
        self.answer.set_stats(None, live=True)
        self.view.set_streaming(True)
        self._save_timer.start()
        handle = self.client.generate(
            self.request_for(messages, conversation_prompt(self.history, self.conversation_id))
        )
        handle.token_received.connect(self._on_token)
        handle.stats_updated.connect(self._on_stats)
        handle.finished.connect(self._on_finished)
        handle.failed.connect(self._on_failed)
        self.handle = handle
        self.busy_changed.emit(True)

    def _from_current(self) -> bool:
        """The signal comes from the answer being streamed (not one that was cancelled away)."""
        return self.handle is not None and self.sender() is self.handle

    @Slot(str, str)
    def _on_token(self, text: str, drafter: str) -> None:
        if self._from_current() and self.answer is not None:
            self.answer.append(text, drafter)
            self._unsaved = True

    @Slot(object)
    def _on_stats(self, stats: GenerationStats) -> None:
        if self._from_current() and self.answer is not None:
            self.answer.set_stats(stats.to_dict(), live=True)

    def _save_partial(self) -> None:
        if self._unsaved and self.answer is not None and self.answer_id is not None:
            self._write(
                lambda: self.history.update_message(self.answer_id or 0, self.answer.text if self.answer else "")
            )
            self._unsaved = False

    def _write(self, action: Callable[[], object]) -> None:
        """A history write during an answer: a failure is said once per answer, the answer goes on."""
        try:
            action()
        except sqlite3.Error as exc:
            if not self._save_error_shown:
                self._save_error_shown = True
                self.store_failed.emit(
                    f"The answer is not being saved to the chat history ({exc}); it stays on screen: copy what you need"
                )

    @Slot(object)
    def _on_finished(self, done: Done) -> None:
        if self._from_current():
            self._end_answer(done.stats.to_dict(), done.text)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        if self._from_current():
            self._end_answer({"finish_reason": FinishReason.FAILED.value, "error": message})
            self.error.emit(message)

    @Slot(str)
    def _on_crash(self, reason: str) -> None:
        if self.handle is not None:
            last = dict(self.answer.stats or {}) if self.answer is not None else {}
            # keep the last live figures
            self._end_answer({**last, "finish_reason": FinishReason.INTERRUPTED.value, "error": reason})

    def _end_answer(self, stats: dict[str, Any], text: str | None = None) -> None:
        answer, answer_id = self.answer, self.answer_id
        self.handle = None
        self.answer = self.answer_id = None
        self._save_timer.stop()
        self.view.set_streaming(False)
        if answer is not None:
            if text is not None and text != answer.text:
                answer.set_text(text)  # the final text is authoritative (stop strings trimmed)
            answer.render_text()
            if stats.get("finish_reason") == FinishReason.FAILED:
                answer.set_stats(None)
                answer.footer.setText(f"failed: {stats.get('error', '')}")
            else:
                answer.set_stats(stats)
            if answer_id is not None:
                if answer.text or stats.get("finish_reason") != FinishReason.FAILED:
                    self._write(lambda: self.history.update_message(answer_id, answer.text, stats))
                else:
                    self._write(lambda: self.history.delete_message(answer_id))  # nothing worth keeping
        self._unsaved = False
        self.busy_changed.emit(False)
