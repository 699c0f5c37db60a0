"""The window's side of the user's MCP servers: which are running and what tools they offer,
the tools a conversation's answers are offered, and their calls, run without the window waiting.

Nothing starts until the user has added a server (Preferences → Tools): only then is an
:class:`~desktop_app.tools.mcp_host.McpHost` made. Its futures are watched from a timer in the
GUI thread, so their results arrive there.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from concurrent.futures import CancelledError, Future
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QWidget

from desktop_app.engine.api import GenerateRequest, Tool
from desktop_app.engine.tool_calls import ToolFormat
from desktop_app.server.errors import BadRequest
from desktop_app.server.tool_grammar import tool_call_grammar
from desktop_app.server.tool_use import AUTO, NONE, REQUIRED, ToolUse, with_tools
from desktop_app.store import Settings
from desktop_app.store.tool_servers import ALL_TOOLS, ToolServer, read_servers
from desktop_app.tools.mcp_host import CallResult, McpHost, OfferedTool, ServerState
from desktop_app.ui.engine.engine_client import EngineClient
from desktop_app.ui.widgets.plain_text import plain_tip

POLL_MS = 50
MAX_ROUNDS = 8  # answers in a row that call tools, before the model is made to answer without
CHOICES = {AUTO: "Tools: the model decides", REQUIRED: "Tools: call one first", NONE: "Tools: off"}


class McpTools(QObject):
    """Signals:
    changed(): the servers' states (and so the tools offered) changed.
    notice(str): a tool's schema is past what a grammar takes (the message names it): answers
    offer the tools without a grammar.
    """

    changed = Signal()
    notice = Signal(str)

    def __init__(
        self, settings: Settings, client: EngineClient, save: Callable[[], None], parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.settings = settings
        self.client = client
        self._save = save
        self.host: McpHost | None = None
        self.states: list[ServerState] = []
        self.starting = False
        self.choice = AUTO  # tool_choice of an answer that follows the user's message
        self._told = ""  # the last notice, said once
        self._watched: list[tuple[Future[Any], Callable[[Any], None]]] = []
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    # ------------------------------------------------------------------ servers
    @property
    def servers(self) -> list[ToolServer]:
        return read_servers(self.settings["mcp_servers"])

    def refresh(self) -> None:
        """Start the enabled servers (and stop the others): after a start, or a change in Settings."""
        servers = self.servers
        if not servers and self.host is None:
            return  # nothing was ever added: nothing runs
        if self.host is None:
            self.host = McpHost()
        self.starting = True
        self.changed.emit()
        self.watch(self.host.start(servers), self._started)

    def _started(self, states: list[ServerState] | BaseException) -> None:
        self.starting = False
        if isinstance(states, BaseException):
            states = [ServerState(s.name, error=str(states)) for s in self.servers if s.enabled]
        self.states = states
        self.changed.emit()
        self._build_grammar()

    def _build_grammar(self) -> None:
        """Build the tools' grammar in a thread (the grammar worker keeps it), so that no answer,
        and never the window, waits for a conversion."""
        models = self.client.models
        fmt = models.target.tool_format if models is not None else None
        tools = [t.as_tool() for t in self.tools]
        if fmt is not None and tools:
            threading.Thread(target=_grammar_problem, args=(fmt, tools), name="mcp-grammar", daemon=True).start()

    @property
    def tools(self) -> list[OfferedTool]:
        return [t for state in self.states for t in state.tools]

    def tool_names(self) -> dict[str, list[str]]:
        """Each running server's own names for its tools."""
        return {state.name: [t.tool for t in state.tools] for state in self.states}

    def tool(self, name: str) -> OfferedTool | None:
        return next((t for t in self.tools if t.name == name), None)

    def always_allowed(self, tool: OfferedTool) -> bool:
        return any(s.name == tool.server and s.allows(tool.tool) for s in self.servers)

    def allow_always(self, tool: OfferedTool, whole_server: bool = False) -> None:
        """Run ``tool`` (with ``whole_server``, every tool of its server) without asking from now on."""
        allowed = ALL_TOOLS if whole_server else tool.tool
        servers = [s.allowing(allowed) if s.name == tool.server else s for s in self.servers]
        self.settings.set("mcp_servers", [s.to_json() for s in servers])
        self._save()

    def summary(self) -> str:
        """One line per server: its tools, or why it has none."""
        if self.starting:
            return "Starting the MCP servers…"
        lines = [f"{s.name}: " + (s.error or ", ".join(t.name for t in s.tools) or "no tools") for s in self.states]
        return "\n".join(lines) or "No MCP server is on (Preferences → Tools)"

    # ------------------------------------------------------------------ answers
    def offer(self, request: GenerateRequest) -> GenerateRequest:
        """``request`` offering the servers' tools, when the loaded model's template takes tools:
        forced to call one when the user chose so and the answer follows their message; not at
        all after MAX_ROUNDS answers in a row that called."""
        models = self.client.models
        fmt = models.target.tool_format if models is not None else None
        messages = list(request.messages or [])
        rounds = 0
        for m in reversed(messages):
            if m["role"] == "user":
                break
            rounds += m["role"] == "assistant" and bool(m.get("tool_calls"))
        tools = tuple(t.as_tool() for t in self.tools)
        if not tools or fmt is None or self.choice == NONE or rounds >= MAX_ROUNDS:
            return request
        choice = REQUIRED if self.choice == REQUIRED and messages and messages[-1]["role"] == "user" else AUTO
        problem = _grammar_problem(fmt, list(tools))  # built already, in a thread, as the tools came
        if problem is not None and problem != self._told:
            self.notice.emit(f"MCP tools are offered without a grammar: {problem}")
        self._told = problem or ""
        try:
            if problem is None:
                return with_tools(request, ToolUse(fmt, tools, choice, parallel=False))
        except BadRequest:
            pass
        return dataclasses.replace(request, tools=tools)  # a schema no grammar takes: offered, not forced

    def call(self, tool: OfferedTool, arguments: dict[str, Any], done: Callable[[CallResult], None]) -> Future[Any]:
        """Run a tool; ``done`` gets its result in the GUI thread (never when the future is cancelled)."""
        assert self.host is not None
        future = self.host.call(tool.server, tool.tool, arguments)

        def finished(result: CallResult | BaseException) -> None:
            if isinstance(result, CancelledError):
                return
            done(result if isinstance(result, CallResult) else CallResult(str(result), failed=True))

        self.watch(future, finished)
        return future

    def close(self) -> None:
        self._timer.stop()
        if self.host is not None:
            self.host.close()

    # ------------------------------------------------------------------ futures
    def watch(self, future: Future[Any], then: Callable[[Any], None]) -> None:
        """Call ``then`` in the GUI thread with the future's result (or its exception)."""
        self._watched.append((future, then))
        self._timer.start()

    def _poll(self) -> None:
        done = [(f, then) for f, then in self._watched if f.done()]
        self._watched = [(f, then) for f, then in self._watched if not f.done()]
        if not self._watched:
            self._timer.stop()
        for future, then in done:
            if future.cancelled():
                then(CancelledError())
            else:
                error = future.exception()
                then(error if error is not None else future.result())


def _grammar_problem(fmt: ToolFormat, tools: list[Tool]) -> str | None:
    """Why no grammar takes these tools' schemas, naming the tool (None: one does)."""
    try:
        tool_call_grammar(fmt, tools, parallel=False)
    except ValueError as exc:
        return str(exc).replace("the function '", "the MCP tool '", 1)
    return None


class ToolChoiceBox(QComboBox):
    """Next to the message box while a server offers tools: whether answers may call them."""

    def __init__(self, tools: McpTools, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("toolChoice")
        self.setAccessibleName("Tool use")
        self._tools = tools
        for key, label in CHOICES.items():
            self.addItem(label, key)
        self.currentIndexChanged.connect(lambda _i: setattr(tools, "choice", self.currentData()))
        tools.changed.connect(self._update)
        self._update()

    def _update(self) -> None:
        self.setVisible(bool(self._tools.states) or self._tools.starting)
        self.setToolTip(plain_tip(self._tools.summary()))  # tool names, a server's stderr
