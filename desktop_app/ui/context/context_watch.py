"""What the window shows of the model's context, kept up to date:

- the meter counts the next prompt (the open conversation as the engine would be sent it, with
  its system prompt and the text being typed with its files; while a message is edited, the
  conversation above it) through the engine, with the model's own template and tokenizer: asked COUNT_DELAY_MS
  after the typing pauses, never waited for, the newest answer wins; counted again at once when
  another conversation or version is shown, editing starts or ends, and a model is loaded;
- the transcript's note says where the model's context began for the last answer (as soon as
  the engine starts reading its prompt, and again when the conversation is opened);
- the answer's footer says how far the engine has read a long prompt;
- the overflow policy (meter's menu) and "Raise the context to N" (meter and note) change the
  settings; raising reloads the model through the :class:`ModelLoader`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtWidgets import QPlainTextEdit

from desktop_app.documents.attachment import Attachment
from desktop_app.documents.prompt_text import to_message
from desktop_app.engine.api import GenerateRequest, LoadedModels, Message, OverflowPolicy
from desktop_app.engine.context_size import PromptSize, raise_offer
from desktop_app.engine.events import PromptProgress
from desktop_app.store import History, Settings
from desktop_app.ui.composer.system_prompt import conversation_prompt
from desktop_app.ui.context.context_meter import ContextMeter
from desktop_app.ui.context.context_note import ContextNote
from desktop_app.ui.conversations.chat_session import ChatSession
from desktop_app.ui.engine.engine_client import EngineClient, GenerationHandle
from desktop_app.ui.transcript.chat_view import ChatView

COUNT_DELAY_MS = 300
RequestFor = Callable[[list[Message], str | None], GenerateRequest]


class ContextWatch(QObject):
    """Wires the window's context meter, transcript note and answer footers to the engine.

    ``request_for(messages, system_prompt)`` makes the request an answer would send (what is
    counted), ``reload_models()`` loads the models again (with a raised context), and
    ``save_settings()`` saves a changed setting."""

    def __init__(
        self,
        meter: ContextMeter,
        chat_view: ChatView,
        input_box: QPlainTextEdit,
        session: ChatSession,
        client: EngineClient,
        settings: Settings,
        history: History,
        request_for: RequestFor,
        reload_models: Callable[[], None],
        save_settings: Callable[[], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.meter = meter
        self._view, self._input, self._session, self._client = chat_view, input_box, session, client
        self._settings, self._history = settings, history
        self._request_for, self._reload_models, self._save_settings = request_for, reload_models, save_settings
        self.note = ContextNote(chat_view)
        self._asked = 0  # the id of the newest count asked for
        self._answered = 0  # the id of the newest count answered
        self._reading: GenerationHandle | None = None  # the answer whose prompt placed the note
        self._conversation: list[Message] | None = None  # the open conversation as the engine gets it
        self.attached: Callable[[], list[Attachment]] = list  # the files of the message being written
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(COUNT_DELAY_MS)
        self._timer.timeout.connect(self.count)
        self.meter.set_policy(OverflowPolicy(settings["context_overflow"]))
        self.meter.show_size(None)
        input_box.textChanged.connect(self._timer.start)
        session.conversation_changed.connect(self._on_conversation_changed)
        session.busy_changed.connect(self._on_busy_changed)
        # the conversation changes: read it again for the next count (now, where nothing is typed)
        chat_view.regenerate_requested.connect(self._forget_conversation)
        session.shown.switched.connect(self._recount)  # another version: another path
        session.editing_changed.connect(self._recount)  # the prompt ends above the message edited
        client.model_loaded.connect(self._on_model_loaded)
        client.prompt_counted.connect(self._on_counted)
        client.generation_started.connect(self._on_generation_started)
        client.engine_crashed.connect(lambda _why: self.meter.show_size(None, "The engine is not running"))
        self.meter.policy_chosen.connect(self.set_policy)
        self.meter.raise_requested.connect(self.raise_context)
        self.note.raise_requested.connect(self.raise_context)

    # ------------------------------------------------------------------ counting
    def count(self) -> None:
        """Ask the engine for the next prompt's size now (the meter shows the answer)."""
        self._timer.stop()
        self._timer.setInterval(COUNT_DELAY_MS)  # after a count soon (0 ms)
        session, client = self._session, self._client
        if session.busy:
            return  # counted when the answer ends: the conversation is still changing
        if not client.running or client.models is None:
            self.meter.show_size(None)
            return
        text = self._input.toPlainText().strip()
        try:
            if self._conversation is None:  # read once per change (a conversation may be long)
                self._conversation = session.engine_messages(before_edit=True)
            prompt = conversation_prompt(self._history, session.conversation_id)
        except sqlite3.Error as exc:
            self.meter.show_size(None, f"The chat history cannot be read ({exc})")
            return
        messages, files = list(self._conversation), self.attached()
        if text or files:
            messages.append(to_message("user", text, files))
        self._asked = client.count_prompt(self._request_for(messages, prompt))

    @property
    def counting(self) -> bool:
        """A count is due or asked for and not answered yet (the meter will change)."""
        return self._timer.isActive() or self._asked != self._answered

    def _count_soon(self) -> None:
        self._timer.start(0)

    @Slot(int, object, str)
    def _on_counted(self, asked: int, size: PromptSize | None, error: str) -> None:
        if asked != self._asked:
            return  # an older question: a newer answer is on its way
        self._answered = asked
        self.meter.show_size(size, error)
        self._show_offer()

    def _show_offer(self) -> None:
        models = self._client.models
        offer = raise_offer(models.target, models.draft) if models is not None else None
        self.meter.show_offer(offer)
        self.note.show_offer(offer)

    # ------------------------------------------------------------------ events
    @Slot(object)
    def _on_model_loaded(self, _models: LoadedModels) -> None:
        self._show_offer()
        self._count_soon()

    def _forget_conversation(self) -> None:
        self._conversation = None

    def _recount(self) -> None:
        """What the prompt holds changed: read the conversation again and count it now."""
        self._conversation = None
        self._count_soon()

    @Slot(bool)
    def _on_busy_changed(self, busy: bool) -> None:
        self._conversation = None
        self.meter.raise_button.setEnabled(not busy)
        self.note.raise_button.setEnabled(not busy)
        if not busy:
            self._count_soon()

    @Slot(object)
    def _on_generation_started(self, handle: GenerationHandle) -> None:
        handle.prompt_progress.connect(lambda progress, h=handle: self._on_progress(h, progress))

    def _on_progress(self, handle: GenerationHandle, progress: PromptProgress) -> None:
        session = self._session
        answer = session.answer
        if handle is not session.handle or answer is None:
            return  # an API or race answer, or one cancelled away
        answer.set_progress(progress.done, progress.total)
        if self._reading is not handle:  # the first news of this answer: where its context begins
            self._reading = handle
            sent = [m for m in handle.request.messages or () if m["role"] != "system"]
            self.note.show_for(answer, progress.dropped_turns, len(sent) - progress.dropped_turns)

    @Slot(int)
    def _on_conversation_changed(self, _conversation_id: int) -> None:
        """A conversation opened: the note where its last answer's context began (its stats, as
        stored); the conversation is read again for the next count (not now: it may be long)."""
        self._conversation = None
        self.note.clear()
        self._count_soon()  # now: the last conversation's count must not stay
        view = self._view
        for i in range(len(view.messages) - 1, -1, -1):
            answer = view.messages[i]
            if answer.role == "assistant" and answer.stats and "prompt_tokens" in answer.stats:
                dropped = int(answer.stats.get("dropped_turns") or 0)
                # what its prompt held: the messages before it, empty answers aside (the earlier
                # ones not shown are counted whole)
                shown = sum(1 for m in view.messages[:i] if m.text or m.role != "assistant")
                if dropped:
                    self.note.show_for(answer, dropped, view.earlier_count + shown - dropped)
                return

    # ------------------------------------------------------------------ choices
    def set_policy(self, value: str) -> None:
        """What a conversation that outgrows the context does (the meter's menu)."""
        self._settings.set("context_overflow", value)
        self._save_settings()
        self.meter.set_policy(OverflowPolicy(value))

    def raise_context(self, n_ctx: int) -> None:
        """Reload the model with a context of ``n_ctx`` tokens (the n_ctx setting)."""
        if self._session.busy or self._client.loading:
            return
        self._settings.set("n_ctx", n_ctx)
        self._save_settings()
        self.meter.show_offer(None)
        self.note.show_offer(None)
        self._reload_models()
