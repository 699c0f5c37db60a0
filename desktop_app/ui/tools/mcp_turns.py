"""An answer's tool calls, run in the open conversation: each shows as a card under the answer,
asks to be allowed (unless its tool is always allowed), runs on its MCP server, and its result is
kept in the history; when every call has a result (or was denied), the model goes on, reading
them, until it answers without calls. Stop stops the call running and the ones waiting.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from concurrent.futures import Future
from typing import Any

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QBoxLayout

from desktop_app.engine_process.protocol import Done
from desktop_app.store import History
from desktop_app.store.tool_calls import CallStatus, ToolCallRecord
from desktop_app.tools.mcp_host import CallResult
from desktop_app.ui.conversations.chat_session import ChatSession
from desktop_app.ui.tools.mcp_card import ALWAYS, ALWAYS_SERVER, DENY, ToolCallCard
from desktop_app.ui.tools.mcp_tools import McpTools
from desktop_app.ui.transcript.chat_view import ChatView, MessageWidget

UNFINISHED = (CallStatus.WAITING, CallStatus.RUNNING)


class ToolTurns(QObject):
    """Runs the open conversation's tool calls (see the module's docstring)."""

    def __init__(self, session: ChatSession, tools: McpTools, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.tools = tools
        self.history: History = session.history
        self.view: ChatView = session.view
        self.queue: list[ToolCardCall] = []  # this answer's calls not run yet, in order
        self.running: tuple[ToolCardCall, Future[Any]] | None = None
        session.answered.connect(self._on_answered)
        session.stop_requested.connect(self.stop)
        self.view.message_shown.connect(self._on_shown)

    @property
    def active(self) -> bool:
        return bool(self.queue) or self.running is not None

    # ------------------------------------------------------------------ an answer's calls
    @Slot(int, object, object)
    def _on_answered(self, answer_id: int, done: Done, widget: MessageWidget | None) -> None:
        try:
            records = self.history.tool_calls.add(answer_id, done.calls)
        except sqlite3.Error as exc:
            self.session.store_failed.emit(
                f"The model's tool calls were not run: the chat history cannot be written ({exc})"
            )
            return
        self.queue = [ToolCardCall(self, r, widget) for r in records]
        self._hold(True)
        self._next()

    def _next(self) -> None:
        """Ask about (or run) the next call; when none is left, the model goes on."""
        if self.running is not None:
            return
        if not self.queue:
            self._hold(False)
            self._answer_again()
            return
        call = self.queue[0]
        tool = self.tools.tool(call.record.name)
        if tool is None:
            self._finish(call, CallStatus.FAILED, f"There is no tool named '{call.record.name}'")
        elif self.tools.always_allowed(tool):
            self._run(call)
        elif call.card is not None:
            call.card.show_record(call.record)  # its question shows: decide() goes on
        else:
            self._run(call)  # no card (the answer's widget went): never reached while a conversation is shown

    def decide(self, call: ToolCardCall, choice: str) -> None:
        """The user answered a call's question (its card's buttons)."""
        if not self.queue or self.queue[0] is not call or self.running is not None:
            return
        tool = self.tools.tool(call.record.name)
        if choice == DENY or tool is None:
            self._finish(call, CallStatus.DENIED)
            return
        if choice in (ALWAYS, ALWAYS_SERVER):
            self.tools.allow_always(tool, whole_server=choice == ALWAYS_SERVER)
        self._run(call)

    def _run(self, call: ToolCardCall) -> None:
        tool = self.tools.tool(call.record.name)
        assert tool is not None
        try:
            arguments = json.loads(call.record.arguments or "{}")
            if not isinstance(arguments, dict):
                raise ValueError("the arguments are not an object")
        except ValueError as exc:
            self._finish(call, CallStatus.FAILED, f"The arguments are not a JSON object: {exc}")
            return
        call.update(CallStatus.RUNNING)
        self.running = (call, self.tools.call(tool, arguments, lambda result: self._ran(call, result)))

    def _ran(self, call: ToolCardCall, result: CallResult) -> None:
        if self.running is None or self.running[0] is not call:
            return  # stopped meanwhile
        self.running = None
        self._finish(call, CallStatus.FAILED if result.failed else CallStatus.DONE, result.text)

    def _finish(self, call: ToolCardCall, status: CallStatus, result: str = "") -> None:
        call.update(status, result)
        if self.queue and self.queue[0] is call:
            self.queue.pop(0)
        self._next()

    @Slot()
    def stop(self) -> None:
        """Stop: the call running is cancelled, those waiting are not run; the model does not go on."""
        if not self.active:
            return
        calls = [self.running[0]] if self.running is not None else []
        if self.running is not None:
            self.running[1].cancel()
            self.running = None
        for call in calls + self.queue:
            call.update(CallStatus.STOPPED)
        self.queue = []
        self._hold(False)

    # ------------------------------------------------------------------ the session
    def _hold(self, on: bool) -> None:
        """The session stays busy (Send off, Stop on) while calls wait or run."""
        was = self.session.busy
        self.session.held = on
        if self.session.busy != was:
            self.session.busy_changed.emit(self.session.busy)

    def _answer_again(self) -> None:
        """The model reads the results and goes on, in a new answer after the one that called."""
        s = self.session
        if s.busy or s.conversation_id is None:
            return
        try:
            messages = s.engine_messages()
            answer = self.history.add_message(s.conversation_id, "assistant", "")
        except sqlite3.Error as exc:
            s.store_failed.emit(f"The model cannot go on: the chat history cannot be written ({exc})")
            return
        s.start_answer(messages, answer)

    # ------------------------------------------------------------------ a conversation shown
    @Slot(object)
    def _on_shown(self, widget: MessageWidget) -> None:
        """A stored answer shown: its calls' cards under it (unfinished ones: stopped)."""
        if widget.role != "assistant":
            return
        position = self.view.earlier_count + self.view.messages.index(widget)
        messages = self.session.shown.messages
        if position >= len(messages) or messages[position].role != "assistant":
            return
        try:
            records = self.history.tool_calls.of([messages[position].id]).get(messages[position].id, [])
        except sqlite3.Error:
            return
        for record in records:
            call = ToolCardCall(self, record, widget)
            if record.status in UNFINISHED and not any(c.record == record for c in self.queue):
                call.update(CallStatus.STOPPED)  # the app closed, or the conversation was left, before it ran


class ToolCardCall:
    """One call being handled: its record (kept in the history as it changes) and its card."""

    def __init__(self, turns: ToolTurns, record: ToolCallRecord, widget: MessageWidget | None) -> None:
        self.turns = turns
        self.record = record
        self.card: ToolCallCard | None = None
        if widget is not None:
            tool = turns.tools.tool(record.name)
            self.card = ToolCallCard(record, tool.server if tool is not None else "")
            layout = widget.layout()
            assert isinstance(layout, QBoxLayout)
            layout.insertWidget(layout.count() - 1, self.card)  # above the footer and its actions
            self.card.show()  # now, not when the layout's queued show runs (its question is asked at once)
            widget.content.setVisible(bool(widget.text))  # an answer that only calls leaves no blank
            self.card.decided.connect(lambda choice: turns.decide(self, choice))

    def update(self, status: CallStatus, result: str = "") -> None:
        self.record = dataclasses.replace(self.record, status=status, result=result)
        try:
            self.turns.history.tool_calls.update(self.record)
        except sqlite3.Error as exc:
            self.turns.session.store_failed.emit(f"A tool call's result was not saved ({exc})")
        if self.card is not None:
            self.card.show_record(self.record)
