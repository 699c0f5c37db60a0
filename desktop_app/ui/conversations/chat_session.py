"""The open conversation: what is shown, what is stored, and what the engine is asked.

Only this object writes messages to the history while chatting (the streaming answer through
ui/conversations/answer_writes.py: every half second and at the end, so a crash keeps what the user saw). Regenerate and
Edit & resend add versions (siblings in the history's message tree); nothing is deleted, and the
transcript shows ``< 2/3 >`` on a message with versions. What is shown is the path the history
shows, and it is what the engine is asked about.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from desktop_app.documents.attachment import Attachment
from desktop_app.engine.api import FinishReason, GenerateRequest, Message
from desktop_app.engine.stats import GenerationStats, continued_stats
from desktop_app.engine_process.protocol import Done
from desktop_app.store import History, StoredMessage
from desktop_app.store.message_files import add_question, prompt_messages
from desktop_app.ui.composer.system_prompt import conversation_prompt
from desktop_app.ui.conversations.answer_writes import AnswerWrites
from desktop_app.ui.engine.engine_client import EngineClient, GenerationHandle
from desktop_app.ui.transcript.chat_view import ChatView, MessageWidget
from desktop_app.ui.transcript.shown_path import ShownPath

TITLE_LENGTH = 48


def title_for(text: str) -> str:
    """A conversation title from its first message: one line, no Markdown marks, at most TITLE_LENGTH."""
    line = " ".join(re.sub(r"[`*#>_]+", " ", text).split())
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1].rstrip() + "…"


class ChatSession(QObject):
    """Sends the conversation to the engine and streams the answer into the view and the store.

    Signals:
        busy_changed(bool): an answer started (True) or ended (False).
        leaving(int): another conversation is about to be opened (0: from a new one not stored).
        conversation_changed(int): the open conversation (0: a new one not stored yet).
        editing_changed(int): the user message being edited (0: none); the next send replaces it.
        error(str): something to tell the user (a failed answer).
        store_failed(str): the history could not be read or written; what was not saved.
        answered(int, Done, MessageWidget) / stop_requested(): an answer ended with tool calls / Stop (ui/tools/mcp_turns.py).
    """

    busy_changed = Signal(bool)
    leaving = Signal(int)
    conversation_changed = Signal(int)
    editing_changed = Signal(int)
    error = Signal(str)
    store_failed = Signal(str)
    answered = Signal(int, object, object)
    stop_requested = Signal()

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
        self.shown = ShownPath(view, history, self)  # the messages shown (and those behind "show earlier")
        self.editing: int | None = None  # the user message the next send makes a new version of
        self.attaching: list[Attachment] = []  # the files the next send attaches (ui/composer/attachments.py)
        self.sees_images: Callable[[], bool] = lambda: True  # the target does (else images are said in words)
        self.handle: GenerationHandle | None = None
        self.answer: MessageWidget | None = None
        self.answer_id: int | None = None
        self.held = False  # its tool calls are being confirmed or run (ui/tools/mcp_turns.py)
        self.continued: tuple[str, dict[str, Any] | None] | None = None  # the answer's text and stats before Continue
        self.writes = AnswerWrites(
            history, lambda: (self.answer_id, self.answer.text if self.answer else None), self.store_failed.emit, self
        )
        client.engine_crashed.connect(self._on_crash)
        view.regenerate_requested.connect(self.regenerate)
        view.continue_requested.connect(self.continue_answer)
        self.shown.switched.connect(self._on_switched)
        self.shown.failed.connect(self.store_failed)
        self.busy_changed.connect(lambda busy: self.shown.allow_switching(not busy))
        self.busy_changed.connect(view.set_busy)  # actions off while busy (a tool call waits), Continue after

    @property
    def busy(self) -> bool:
        return self.handle is not None or self.held

    # ------------------------------------------------------------------ conversations
    def open(self, conversation_id: int | None) -> None:
        """Show a stored conversation (None: a fresh one, stored at its first message)."""
        self.leaving.emit(self.conversation_id or 0)
        if self.busy:
            self.cancel()
            self._end_answer({"finish_reason": FinishReason.CANCELLED.value})
        self.cancel_edit()
        conv = self.history.conversation(conversation_id) if conversation_id else None
        self.conversation_id = conv.id if conv else None
        self.shown.show(self.history.messages(conv.id) if conv else [])
        self.conversation_changed.emit(self.conversation_id or 0)

    def engine_messages(self, before_edit: bool = False) -> list[Message]:
        """The prompt: the path shown (the versions chosen), without answers that have no text;
        ``before_edit``: only the messages above the one being edited (its new text follows)."""
        if self.conversation_id is None:
            return []
        path = self.history.messages(self.conversation_id)
        if before_edit and self.editing is not None:
            path = path[: next((i for i, m in enumerate(path) if m.id == self.editing), len(path))]
        return prompt_messages(self.history, path, self.sees_images())

    # ------------------------------------------------------------------ actions
    def send(self, text: str) -> bool:
        """Add a user message (a new version of the one being edited, if any) and start the
        answer; False when busy or there is neither text nor a file."""
        text, files = text.strip(), self.attaching
        if not (text or files) or self.busy:
            return False
        edited = self.shown.position(self.editing)  # None: a new message at the end
        try:
            if self.conversation_id is None:
                self.conversation_id = self.history.create_conversation(title_for(text or files[0].name)).id
                self.conversation_changed.emit(self.conversation_id)
            editing = self.editing if edited is not None else None
            question = add_question(self.history, self.conversation_id, editing, text, files)
            messages = self.engine_messages()
            answer = self.history.add_message(self.conversation_id, "assistant", "")
        except sqlite3.Error as exc:
            self.store_failed.emit(
                f"Your message was not sent: the chat history cannot be written ({exc}); your text is still in the box"
            )
            return False
        self.shown.replace_from(len(self.shown.messages) if edited is None else edited, [question])
        self.cancel_edit()
        self.start_answer(messages, answer)
        return True

    def regenerate(self) -> None:
        """Generate the last answer again, as a new version: the old one stays (``< 1/2 >``)."""
        path = self.shown.messages
        if self.busy or not path or path[-1].role != "assistant":
            return
        try:
            answer = self.history.add_version(path[-1].id, "")
            messages = self.engine_messages()
        except sqlite3.Error as exc:
            self.store_failed.emit(f"The answer was not regenerated: the chat history cannot be written ({exc})")
            return
        self.shown.replace_from(len(path) - 1, [])
        self.start_answer(messages, answer)

    def continue_answer(self) -> None:
        """Go on with the last answer where it ended (its length ran out, or Stop): the same message grows."""
        path, shown = self.shown.messages, self.view.messages
        if self.busy or not path or path[-1].role != "assistant" or not shown or shown[-1].role != "assistant":
            return
        self.continued = (shown[-1].text, shown[-1].stats)
        self.start_answer(self.engine_messages(), path[-1], shown[-1])

    def start_edit(self, message_id: int | None = None) -> str | None:
        """Edit a message shown (your last one by default): the next send makes a new version of
        it (of an answer: ui/composer/input_drafts.py); nothing changes until then. Returns its
        text (None: nothing to edit)."""
        users = [m for m in self.shown.messages if m.role == "user" or m.id == message_id]  # or the answer given
        chosen = [m for m in users if m.id == message_id] if message_id is not None else users[-1:]
        if self.busy or not chosen:
            return None
        self.editing = chosen[0].id
        self.editing_changed.emit(self.editing)
        return chosen[0].content

    def cancel_edit(self) -> None:
        if self.editing is not None:
            self.editing = None
            self.editing_changed.emit(0)

    def _on_switched(self) -> None:
        if self.editing is not None and self.shown.position(self.editing) is None:
            self.cancel_edit()  # the message being edited is not shown any more

    def cancel(self) -> None:
        if self.handle is not None:
            self.client.cancel(self.handle)
        self.stop_requested.emit()

    def save_now(self) -> None:
        """Write the streaming answer's text so far (the window is closing)."""
        self.writes.unsaved = True
        self.writes.save_partial()

    # ------------------------------------------------------------------ streaming
    def start_answer(self, messages: list[Message], answer: StoredMessage, grows: MessageWidget | None = None) -> None:
        """Stream an answer into the history's ``answer`` and a new message (``grows``: into this one, continued)."""
        if grows is None:
            self.continued = None
            self.shown.messages.append(answer)  # its widget, below, gets its ``< 2/2 >``
        self.answer_id = answer.id
        self.answer = grows or self.view.add_message("assistant")
        self.answer.set_stats(None, live=True)
        self.view.set_streaming(True)
        self.writes.begin()
        request = self.request_for(messages, conversation_prompt(self.history, self.conversation_id))
        going_on = self.continued is not None and bool(messages) and messages[-1]["role"] == "assistant"
        handle = self.client.generate(replace(request, continue_answer=True) if going_on else request)
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
            self.writes.unsaved = True

    @Slot(object)
    def _on_stats(self, stats: GenerationStats) -> None:
        if self._from_current() and self.answer is not None:
            self.answer.set_stats(stats.to_dict(), live=True)

    @Slot(object)
    def _on_finished(self, done: Done) -> None:
        if self._from_current():
            self._end_answer(done.stats.to_dict(), done.text, done)

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

    def _end_answer(self, stats: dict[str, Any], text: str | None = None, done: Done | None = None) -> None:
        answer, answer_id, (before, before_stats) = self.answer, self.answer_id, self.continued or ("", None)
        if self.continued is not None:  # the answer continued: its text and figures before, then these
            text, stats = None if text is None else before + text, continued_stats(before_stats, stats)
        self.handle, self.continued = None, None
        self.answer = self.answer_id = None
        self.writes.end()
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
                    self.writes.write(lambda: self.history.update_message(answer_id, answer.text, stats))
                else:
                    self.writes.write(lambda: self.history.delete_message(answer_id))  # nothing worth keeping
                    self._reread_path()  # an earlier version of it is shown again
        self.busy_changed.emit(False)
        if done is not None and done.calls and answer_id is not None:
            self.answered.emit(answer_id, done, answer)  # its calls are run, then the model goes on

    def _reread_path(self) -> None:
        """The path from the history again, the widgets left as they are (one failed answer shows)."""
        if self.conversation_id is not None:
            with contextlib.suppress(sqlite3.Error):
                self.shown.messages = self.history.messages(self.conversation_id)
