"""The engine's child process, owned from the parent: start, pipe, events, cancel, restart. No Qt.

The one way into the engine for the window, its API and `specchat serve`: a llama.cpp crash ends
the child, never its owner. Commands go down a ``multiprocessing`` pipe from any thread; a reader
thread receives the events. An event about one request goes to the ``sink`` given with it (answer
text, a count, vectors), called on the reader thread until the request's last event; every other
event (loads, a fatal error, and requests sent without a sink) goes to the listeners. When the
process dies, each waiting sink hears :class:`EngineLost` with the reason, then the listeners.
"""

from __future__ import annotations

import itertools
import multiprocessing
import signal
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Protocol

from desktop_app.engine.api import GenerateRequest, LoadedModels
from desktop_app.engine_process import service
from desktop_app.engine_process.protocol import (
    Cancel,
    Command,
    CountPrompt,
    Done,
    Embed,
    Embedded,
    EngineEvent,
    Failed,
    Fatal,
    Generate,
    HistoryChanged,
    Load,
    Loaded,
    LoadFailed,
    PromptCounted,
    Ready,
    Shutdown,
)

_SIGNAL_REASONS = {
    signal.SIGSEGV: "crashed in native code (segmentation fault)",
    signal.SIGKILL: "was killed (SIGKILL; the system may have run out of memory)",
    signal.SIGABRT: "aborted (llama.cpp hit a fatal error)",
    signal.SIGBUS: "crashed (bus error)",
    signal.SIGTERM: "was terminated",
}
_LAST = (Done, Failed, PromptCounted, Embedded)  # a request's last event


def crash_reason(exitcode: int | None) -> str:
    """A sentence a user can read for a child exit code (negative: killed by that signal)."""
    if exitcode is None:
        return "The engine stopped answering"
    if exitcode < 0:
        try:
            sig = signal.Signals(-exitcode)
        except ValueError:
            return f"The engine was stopped by signal {-exitcode}"
        return f"The engine {_SIGNAL_REASONS.get(sig, f'was stopped by {sig.name}')} (exit code {exitcode})"
    return f"The engine exited unexpectedly (exit code {exitcode})"


@dataclass(frozen=True)
class EngineLost:
    """The engine went away before it answered: why, in words a user can read."""

    reason: str


Sink = Callable[[EngineEvent | EngineLost], None]


class Listener(Protocol):
    """Told of the events no sink takes and of the process's end, on the reader thread. ``run``
    numbers the processes (:attr:`EngineProcess.run`): a listener that hands events to another
    thread drops those of a run that has been restarted away meanwhile."""

    def on_event(self, run: int, event: EngineEvent) -> None: ...
    def on_ended(self, run: int, reason: str) -> None: ...


class LoadError(Exception):
    """A load failed (:meth:`EngineProcess.load_and_wait`): the engine's message."""


class EngineProcess:
    """Runs the engine in a child process. Thread-safe: any thread may send commands."""

    def __init__(self) -> None:
        self._ctx = multiprocessing.get_context("spawn")
        self._lock = threading.RLock()
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None
        self._reader: threading.Thread | None = None
        self._ids = itertools.count(1)
        self._sinks: dict[int, Sink] = {}
        self._loads: deque[Load] = deque()  # sent and not answered yet, in order
        self._listeners: list[Listener] = []
        self._fatal: str | None = None  # why the process said it is ending
        self.run = 0  # which process: one more at each start
        self.last_load: Load | None = None
        self.loaded_load: Load | None = None  # the load whose models are loaded now
        self.info: Ready | None = None
        self.models: LoadedModels | None = None

    def listen(self, listener: Listener) -> None:
        self._listeners.append(listener)

    # ------------------------------------------------------------------ process
    @property
    def pid(self) -> int | None:
        process = self._process
        return process.pid if process is not None else None

    @property
    def running(self) -> bool:
        process = self._process
        return process is not None and process.is_alive()

    @property
    def loading(self) -> bool:
        """A load was sent and its answer has not come yet."""
        return bool(self._loads)

    def start(self) -> None:
        with self._lock:
            if self.running:
                return
            parent_conn, child_conn = self._ctx.Pipe(duplex=True)
            process = self._ctx.Process(target=service.serve, args=(child_conn,), name="specchat-engine", daemon=True)
            process.start()
            child_conn.close()  # so the reader sees EOF when the child dies
            self.run += 1
            self._process, self._conn = process, parent_conn
            self._fatal = None
            self._sinks = {}
            self._loads.clear()
            self.models = self.loaded_load = None
            self._reader = threading.Thread(
                target=self._read, args=(parent_conn, process, self.run), name="engine-reader", daemon=True
            )
            self._reader.start()

    def restart(self, load: Load | None = None) -> None:
        """A fresh process with ``load`` (default: the last models) loaded; the old one stopped in
        the background (the caller never waits for it to exit)."""
        with self._lock:
            self._detach(in_background=True, reason="the engine was restarted before it answered")
            self.start()
            load = load or self.last_load
            if load is not None:
                self.load(load)

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop the process and wait for it."""
        with self._lock:
            detached = self._detach(reason="the engine was stopped before it answered")
        if detached is not None:
            _reap(*detached, timeout=timeout)

    def _detach(
        self, reason: str, in_background: bool = False
    ) -> tuple[BaseProcess, Connection | None, threading.Thread | None] | None:
        """Forget the current process after asking it to stop; with ``in_background`` a thread reaps it."""
        process, conn, reader = self._process, self._conn, self._reader
        self._process = self._conn = self._reader = None
        self.run += 1  # late events of the old process are dropped from now on
        lost, self._sinks = list(self._sinks.values()), {}
        self._loads.clear()
        self.models = self.loaded_load = None
        for sink in lost:
            sink(EngineLost(reason))
        if process is None:
            return None
        if conn is not None:
            try:
                conn.send(Shutdown())
            except (BrokenPipeError, OSError):
                pass
        if in_background:
            threading.Thread(target=_reap, args=(process, conn, reader), name="engine-reaper", daemon=True).start()
            return None
        return process, conn, reader

    def _send(self, command: Command, request_id: int | None = None, sink: Sink | None = None) -> bool:
        """Send ``command``; its events go to ``sink``. False when no process takes it (the sink
        has then heard EngineLost)."""
        with self._lock:
            if self._conn is not None:
                if sink is not None and request_id is not None:
                    self._sinks[request_id] = sink
                try:
                    self._conn.send(command)
                    return True
                except (BrokenPipeError, OSError):
                    pass  # the process is dying: its end is being reported by the reader
                if request_id is not None:
                    self._sinks.pop(request_id, None)
        if sink is not None:
            sink(EngineLost(self._fatal or "the engine is not running"))
        return False

    # ------------------------------------------------------------------ commands
    def load(self, command: Load) -> None:
        with self._lock:
            self.last_load = command
            self.start()
            self._loads.append(command)
            self._send(command)

    def load_and_wait(self, command: Load, timeout: float | None = None) -> LoadedModels:
        """Load and wait for the engine's answer (`specchat serve` starting); LoadError saying why not."""
        outcome: list[LoadedModels | str] = []
        answered = threading.Event()

        class _Waiter:
            def on_event(self, run: int, event: EngineEvent) -> None:
                if isinstance(event, (Loaded, LoadFailed)):
                    outcome.append(event.models if isinstance(event, Loaded) else event.message)
                    answered.set()

            def on_ended(self, run: int, reason: str) -> None:
                outcome.append(reason)
                answered.set()

        waiter = _Waiter()
        self.listen(waiter)
        try:
            self.load(command)
            if not answered.wait(timeout):
                raise LoadError("the engine did not answer in time")
        finally:
            self._listeners.remove(waiter)
        if isinstance(outcome[0], str):
            raise LoadError(outcome[0])
        return outcome[0]

    def new_id(self) -> int:
        return next(self._ids)

    def generate(self, request: GenerateRequest, sink: Sink | None = None, raw: bool = False) -> int:
        """Queue an answer (the engine answers in order); its id. Without a sink its events go to the listeners."""
        request_id = self.new_id()
        self._send(Generate(request_id, request, raw), request_id, sink)
        return request_id

    def count_prompt(self, request: GenerateRequest, sink: Sink | None = None, keep: bool = False) -> int:
        """Ask how many tokens this chat request's prompt takes (a newer question leaves older
        ones unanswered, unless ``keep``); its id."""
        request_id = self.new_id()
        self._send(CountPrompt(request_id, request, keep), request_id, sink)
        return request_id

    def embed(self, texts: Sequence[str], sink: Sink) -> int:
        """Vectors for ``texts`` from the loaded target, in turn with the answers queued before; its id."""
        request_id = self.new_id()
        self._send(Embed(request_id, tuple(texts)), request_id, sink)
        return request_id

    def cancel(self, request_id: int) -> None:
        """Stop an answer (at its next token, or before it starts) or an embedding (before its next text)."""
        self._send(Cancel(request_id))

    def history_changed(self, deleted: bool = False) -> None:
        """The chat history named in the last load changed: the engine re-syncs its n-gram cache
        in the background (``deleted``: messages went, their n-grams must go too)."""
        self._send(HistoryChanged(deleted))

    # ------------------------------------------------------------------ events
    def _read(self, conn: Connection, process: BaseProcess, run: int) -> None:
        """The reader thread: every message from the engine process, then its end."""
        while True:
            try:
                message = conn.recv()
            except Exception:  # noqa: BLE001 - EOF, a closed pipe or a half-written message from a dying child
                break
            self._received(run, message)
        self._ended(run, process)

    def _received(self, run: int, event: EngineEvent) -> None:
        with self._lock:
            if run != self.run:
                return  # a late message from a process that was restarted away
            request_id = getattr(event, "id", None)
            sink = self._sinks.get(request_id) if request_id is not None else None
            if sink is not None and isinstance(event, _LAST):
                del self._sinks[request_id]  # type: ignore[arg-type]  # not None: a sink was found
            if isinstance(event, Ready):
                self.info = event
            elif isinstance(event, Loaded):
                self.loaded_load = self._loads.popleft() if self._loads else self.last_load
                self.models = event.models
            elif isinstance(event, LoadFailed):
                self._load_failed(event)
            elif isinstance(event, Fatal):
                self._fatal = event.message
        if sink is not None:
            sink(event)
            return
        for listener in list(self._listeners):
            listener.on_event(run, event)

    def _load_failed(self, event: LoadFailed) -> None:
        failed = self._loads.popleft() if self._loads else None
        self.models = event.models
        if event.models is None:
            self.loaded_load = None
        elif failed is not None and failed.target and event.models.target.path == failed.target:
            self.loaded_load = failed  # the new target came in before the failure

    def _ended(self, run: int, process: BaseProcess) -> None:
        process.join(2)
        with self._lock:
            if run != self.run:
                return
            reason = self._fatal or crash_reason(process.exitcode)
            if self._conn is not None:
                self._conn.close()
            self._process = self._conn = self._reader = None
            lost, self._sinks = list(self._sinks.values()), {}
            self._loads.clear()
            self.models = self.loaded_load = None
        for sink in lost:
            sink(EngineLost(reason))
        for listener in list(self._listeners):
            listener.on_ended(run, reason)


def _reap(process: BaseProcess, conn: Connection | None, reader: threading.Thread | None, timeout: float = 5.0) -> None:
    """Wait for a stopping engine process; kill it when it does not stop in time."""
    process.join(timeout)
    if process.is_alive():
        process.kill()
        process.join(2)
    if reader is not None and reader is not threading.current_thread():
        reader.join(2)
    if conn is not None:
        conn.close()
