"""The user's MCP servers, run over stdio with the official SDK on one background thread's event
loop. Every method returns at once with a :class:`concurrent.futures.Future`, so the window
never waits: :meth:`McpHost.start` starts the enabled servers (and stops the others) and gives
their tools, :meth:`McpHost.call` runs one tool (cancelling the future stops it).

A server that cannot start, or a call that fails, is a result that says why, never an exception
lost on the thread: :class:`ServerState.error` and :class:`CallResult` ``failed``. What the SDK
logs about a misbehaving server (a line on its stdout that is not JSON-RPC...) is one line on
stderr each, not a traceback with pydantic's report.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import tempfile
import threading
from collections.abc import Coroutine, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TextIO, TypeVar

from desktop_app.engine.api import Tool
from desktop_app.store.tool_servers import ToolServer

START_TIMEOUT_S = 60.0  # a server's start and its tool list (a `uvx`/`npx` server may download first)
CALL_TIMEOUT_S = 300.0
ERROR_TAIL = 400  # characters of a failed server's own error output that are shown
T = TypeVar("T")


@dataclass(frozen=True)
class OfferedTool:
    """A tool as the model is offered it: ``name`` (unique among all servers' tools) stands for
    ``server``'s ``tool``."""

    server: str
    name: str
    tool: str
    description: str
    schema: dict[str, Any]

    def as_tool(self) -> Tool:
        function = {"name": self.name, "description": self.description, "parameters": self.schema}
        return {"type": "function", "function": function}


@dataclass(frozen=True)
class ServerState:
    """A server after :meth:`McpHost.start`: its tools, or why it has none."""

    name: str
    tools: tuple[OfferedTool, ...] = ()
    error: str = ""


@dataclass(frozen=True)
class CallResult:
    text: str
    failed: bool = False


@dataclass
class _Running:
    server: ToolServer
    session: Any  # mcp.ClientSession
    stop: asyncio.Event
    task: asyncio.Task[None]
    tools: list[Any]  # mcp.types.Tool
    errlog: TextIO  # what the server writes on its stderr


class McpHost:
    """The MCP servers' client side (see the module's docstring); :meth:`close` stops them all."""

    def __init__(self, start_timeout_s: float = START_TIMEOUT_S, call_timeout_s: float = CALL_TIMEOUT_S) -> None:
        self.start_timeout_s = start_timeout_s
        self.call_timeout_s = call_timeout_s
        _one_line_sdk_logs()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-servers", daemon=True)
        self._thread.start()
        self._running: dict[str, _Running] = {}  # touched on the loop's thread only

    def _submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def start(self, servers: Sequence[ToolServer]) -> Future[list[ServerState]]:
        """Run the enabled ``servers`` (those already running with the same command stay as they
        are) and stop every other; the states of the enabled ones, in order."""
        return self._submit(self._start(list(servers)))

    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> Future[CallResult]:
        return self._submit(self._call(server, tool, arguments))

    def close(self, timeout: float = 5.0) -> None:
        """Stop every server and the thread (waits up to ``timeout``)."""
        if not self._thread.is_alive():
            return
        try:
            self._submit(self._start([])).result(timeout)
        except Exception:  # noqa: BLE001 - closing anyway: the servers die with their pipes
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)

    # ------------------------------------------------------------------ on the loop
    async def _start(self, servers: list[ToolServer]) -> list[ServerState]:
        wanted = {s.name: s for s in servers if s.enabled}
        for name, running in list(self._running.items()):
            if _launch(running.server) != _launch(wanted.get(name)):
                await self._stop(name)
            else:
                running.server = wanted[name]  # its always-allowed tools may have changed
        states = await asyncio.gather(*(self._ensure(s) for s in wanted.values()))
        return name_tools(states)

    async def _ensure(self, server: ToolServer) -> ServerState:
        running = self._running.get(server.name)
        if running is None or running.task.done():
            errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
            ready: asyncio.Future[tuple[Any, list[Any]]] = self._loop.create_future()
            ready.add_done_callback(_retrieved)  # read by the wait below, unless it gave up first
            stop = asyncio.Event()
            task = asyncio.create_task(_serve(server, ready, stop, errlog), name=f"mcp-{server.name}")
            try:
                session, tools = await asyncio.wait_for(asyncio.shield(ready), self.start_timeout_s)
            except Exception as exc:  # noqa: BLE001 - any failure to start is said on the server's line
                task.cancel()
                error = _start_error(server, exc, errlog)
                errlog.close()
                return ServerState(server.name, error=error)
            running = self._running[server.name] = _Running(server, session, stop, task, tools, errlog)
        return ServerState(
            server.name,
            tuple(
                OfferedTool(server.name, t.name, t.name, t.description or "", dict(t.input_schema))
                for t in running.tools
            ),
        )

    async def _stop(self, name: str) -> None:
        running = self._running.pop(name)
        running.stop.set()
        try:
            await asyncio.wait_for(running.task, 5.0)
        except (Exception, asyncio.CancelledError):  # noqa: BLE001 - it is going away either way
            running.task.cancel()
        running.errlog.close()

    async def _call(self, server: str, tool: str, arguments: dict[str, Any]) -> CallResult:
        running = self._running.get(server)
        if running is None or running.task.done():
            return CallResult(f"The MCP server '{server}' is not running", failed=True)
        try:
            result = await asyncio.wait_for(running.session.call_tool(tool, arguments), self.call_timeout_s)
        except TimeoutError:
            return CallResult(f"'{tool}' gave no result within {self.call_timeout_s:.0f} s", failed=True)
        except Exception as exc:  # noqa: BLE001 - the server's error, or its end, is the call's result
            return CallResult(f"The MCP server '{server}' failed: {exc or type(exc).__name__}", failed=True)
        return CallResult(result_text(result), bool(result.is_error))


async def _serve(
    server: ToolServer, ready: asyncio.Future[tuple[Any, list[Any]]], stop: asyncio.Event, errlog: TextIO
) -> None:
    """One server's life: started, initialized and listed (``ready``), then kept until ``stop``."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=server.command, args=list(server.args), env=dict(server.env) or None)
    try:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = await _all_tools(session)
            if not ready.done():
                ready.set_result((session, tools))
            await stop.wait()
    except BaseException as exc:
        if not ready.done():
            ready.set_exception(_first(exc) if isinstance(exc, Exception) else RuntimeError("it was stopped"))
        if not isinstance(exc, Exception):
            raise


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Marks a future's exception as seen (asyncio would say "Future exception was never retrieved")."""
    if not future.cancelled():
        future.exception()


class _OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = f"specchat: MCP: {record.getMessage()}"
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None:
            text += f" ({type(exc).__name__}: {_said(exc)})"
        return text


def _said(exc: BaseException) -> str:
    """An exception in a few words: a pydantic error's first complaint and its input, not the report."""
    errors = getattr(exc, "errors", None)
    try:
        first = errors()[0] if callable(errors) else None
    except Exception:  # noqa: BLE001 - any other object with an errors attribute
        first = None
    if isinstance(first, dict) and "msg" in first:
        return f"{first['msg']}, in {str(first.get('input'))[:80]!r}"
    return " ".join(str(exc).split())[:ERROR_TAIL]


def _one_line_sdk_logs() -> None:
    """The MCP SDK's log records as one line each on stderr (once per process)."""
    sdk = logging.getLogger("mcp")
    if not any(isinstance(h.formatter, _OneLine) for h in sdk.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_OneLine())
        handler.setLevel(logging.WARNING)
        sdk.addHandler(handler)
        sdk.propagate = False


def _first(exc: BaseException) -> BaseException:
    """The first error inside task groups' exception groups (what actually went wrong)."""
    while inner := getattr(exc, "exceptions", None):
        exc = inner[0]
    return exc


async def _all_tools(session: Any) -> list[Any]:
    from mcp.types import PaginatedRequestParams

    tools: list[Any] = []
    cursor: str | None = None
    while True:
        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def _launch(server: ToolServer | None) -> tuple[Any, ...] | None:
    return None if server is None else (server.command, server.args, sorted(server.env.items()))


def _start_error(server: ToolServer, exc: BaseException, errlog: TextIO) -> str:
    reason = "it did not answer in time" if isinstance(exc, asyncio.TimeoutError) else (str(exc) or type(exc).__name__)
    if isinstance(exc, FileNotFoundError):
        reason = f"the command '{server.command}' was not found"
    try:
        errlog.seek(0)
        said = errlog.read().strip()[-ERROR_TAIL:]
    except (OSError, ValueError):
        said = ""
    return f"'{server.name}' did not start: {reason}" + (f". It said: {said}" if said else "")


def name_tools(states: Sequence[ServerState]) -> list[ServerState]:
    """The states with every tool named uniquely for the model: a name a server before it took is
    prefixed with its server's name (``server_tool``, in the letters function names allow)."""
    taken: set[str] = set()
    out = []
    for state in states:
        tools = []
        for t in state.tools:
            name = t.tool if t.tool not in taken else re.sub(r"[^A-Za-z0-9_-]", "_", f"{state.name}_{t.tool}")
            taken.add(name)
            tools.append(OfferedTool(t.server, name, t.tool, t.description, t.schema))
        out.append(ServerState(state.name, tuple(tools), state.error))
    return out


def result_text(result: Any) -> str:
    """A tool's result as the model reads it: its text blocks, else its structured content."""
    texts = [getattr(block, "text", None) or f"[{getattr(block, 'type', 'content')}]" for block in result.content]
    if texts:
        return "\n".join(texts)
    return json.dumps(result.structured_content, ensure_ascii=False) if result.structured_content is not None else ""
