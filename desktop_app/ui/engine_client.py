"""The one Qt-side owner of the engine's child process.

Commands go down a ``multiprocessing`` pipe; a reader thread only receives events and hands
them to the GUI thread through a queued signal, so the window never waits on the engine.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from desktop_app.ui import engine_worker

_Detached = tuple[BaseProcess, Connection | None, threading.Thread | None]  # a process being stopped
_SIGNAL_REASONS = {
    signal.SIGSEGV: "crashed in native code (segmentation fault)",
    signal.SIGKILL: "was killed (SIGKILL; the system may have run out of memory)",
    signal.SIGABRT: "aborted (llama.cpp hit a fatal error)",
    signal.SIGBUS: "crashed (bus error)",
    signal.SIGTERM: "was terminated",
}


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


class EngineClient(QObject):
    """Runs the engine in a child process and turns its events into signals.

    Signals:
        engine_started(dict): the process is up: pid, backend, backend_name, device.
        loading_started(str): a model is being loaded (a line to show).
        load_progress(str, float): "target" or "draft" and how much of it is loaded (0..1, rising,
            ending on 1.0); a few dozen times a second at most.
        model_loaded(dict): target (and draft) loaded; see ``engine_worker`` for the keys.
        load_failed(str): loading failed; the previous models stay loaded.
        generation_started(int): a request id was sent.
        token_received(str, bool): text of the answer; True when it came from accepted drafts.
        stats_updated(dict): live GenerationStats.to_dict() about ten times a second.
        finished(dict): {"id", "text", "stats"}; stats["finish_reason"] is "cancelled" after a stop.
        failed(str): the generation failed with this message.
        engine_crashed(str): the process died; a human reason. ``restart()`` brings it back.
    """

    engine_started = Signal(dict)
    loading_started = Signal(str)
    load_progress = Signal(str, float)
    model_loaded = Signal(dict)
    load_failed = Signal(str)
    generation_started = Signal(int)
    token_received = Signal(str, bool)
    stats_updated = Signal(dict)
    finished = Signal(dict)
    failed = Signal(str)
    engine_crashed = Signal(str)

    _received = Signal(object)
    _ended = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ctx = multiprocessing.get_context("spawn")
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None
        self._reader: threading.Thread | None = None
        self._next_id = 0
        self.current_request: int | None = None
        self.loading = False
        self.last_load: dict[str, Any] | None = None
        self.info: dict[str, Any] = {}
        self.models: dict[str, Any] = {}
        self._received.connect(self._dispatch)
        self._ended.connect(self._on_ended)

    # ------------------------------------------------------------------ process
    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.is_alive()

    @property
    def busy(self) -> bool:
        return self.current_request is not None

    def start(self) -> None:
        if self.running:
            return
        parent_conn, child_conn = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(target=engine_worker.serve, args=(child_conn,), name="specchat-engine",
                                    daemon=True)
        process.start()
        child_conn.close()  # so the reader sees EOF when the child dies
        self._process, self._conn = process, parent_conn
        self.current_request = None
        self.models = {}
        self._reader = threading.Thread(target=self._read, args=(parent_conn, process), name="engine-reader",
                                        daemon=True)
        self._reader.start()

    def restart(self) -> None:
        """A fresh process with the last models loaded again; the old one is stopped in the background."""
        self._detach(in_background=True)  # the GUI never waits for the old process to exit
        self.start()
        if self.last_load is not None:
            self.load(**self.last_load)

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop the process and wait for it (used when the window closes)."""
        detached = self._detach()
        if detached is not None:
            _reap(*detached, timeout=timeout)

    def _detach(self, in_background: bool = False) -> _Detached | None:
        """Forget the current process after asking it to stop; with ``in_background`` a thread reaps it."""
        process, conn, reader = self._process, self._conn, self._reader
        self._process = self._conn = self._reader = None
        self.current_request = None
        self.loading = False
        self.models = {}
        if process is None:
            return None
        if conn is not None:
            try:
                conn.send(("shutdown", None))
            except (BrokenPipeError, OSError):
                pass
        if in_background:
            threading.Thread(target=_reap, args=(process, conn, reader), name="engine-reaper", daemon=True).start()
            return None
        return process, conn, reader

    def _read(self, conn: Connection, process: BaseProcess) -> None:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            except Exception:  # noqa: BLE001 - a half-written message from a dying child
                break
            try:
                self._received.emit((process, message))
            except RuntimeError:  # the client was deleted (window closed) while messages arrived
                return
        try:
            self._ended.emit(process)
        except RuntimeError:
            pass

    def _send(self, kind: str, payload: Any) -> bool:
        if self._conn is None:
            return False
        try:
            self._conn.send((kind, payload))
            return True
        except (BrokenPipeError, OSError):
            return False

    # ------------------------------------------------------------------ commands
    def load(self, target: str, target_options: dict[str, Any] | None = None, draft: str | None = None,
             draft_options: dict[str, Any] | None = None) -> None:
        self.last_load = {"target": target, "target_options": dict(target_options or {}), "draft": draft,
                          "draft_options": dict(draft_options or {})}
        self.start()
        self.loading = True
        self._send("load", self.last_load)

    def generate(self, messages: list[dict[str, str]], **fields: Any) -> int:
        """Start an answer; returns its request id. ``fields`` are GenerateRequest's (see worker)."""
        self._next_id += 1
        self.current_request = self._next_id
        self._send("generate", {"id": self._next_id, "messages": messages, **fields})
        self.generation_started.emit(self._next_id)
        return self._next_id

    def cancel(self) -> None:
        if self.current_request is not None:
            self._send("cancel", None)

    # ------------------------------------------------------------------ events
    @Slot(object)
    def _dispatch(self, item: Any) -> None:
        process, (kind, payload) = item
        if process is not self._process:
            return  # a late message from a process that was restarted away
        if kind == "ready":
            self.info = dict(payload)
            self.engine_started.emit(payload)
        elif kind == "loading":
            name = str(payload["path"]).rsplit("/", 1)[-1]
            self.loading_started.emit(f"Loading {payload['stage']} {name}…")
        elif kind == "load_progress":
            self.load_progress.emit(payload["stage"], float(payload["fraction"]))
        elif kind == "model_loaded":
            self.loading = False
            self.models = dict(payload)
            self.model_loaded.emit(payload)
        elif kind == "load_failed":
            self.loading = False
            self.load_failed.emit(payload["message"])
        elif kind == "chunks":
            for text, from_draft in payload["pieces"]:
                self.token_received.emit(text, from_draft)
        elif kind == "stats":
            self.stats_updated.emit(payload["stats"])
        elif kind == "finished":
            if payload["id"] == self.current_request:
                self.current_request = None
            self.finished.emit(payload)
        elif kind == "failed":
            if payload["id"] == self.current_request:
                self.current_request = None
            self.failed.emit(payload["message"])

    @Slot(object)
    def _on_ended(self, process: BaseProcess) -> None:
        if process is not self._process:
            return
        process.join(2)
        reason = crash_reason(process.exitcode)
        if self._conn is not None:
            self._conn.close()
        self._process = self._conn = None
        self.current_request = None
        self.loading = False
        self.models = {}
        self.engine_crashed.emit(reason)


def _reap(process: BaseProcess, conn: Connection | None, reader: threading.Thread | None,
          timeout: float = 5.0) -> None:
    """Wait for a stopping engine process; kill it when it does not stop in time."""
    process.join(timeout)
    if process.is_alive():
        process.kill()
        process.join(2)
    if reader is not None and reader is not threading.current_thread():
        reader.join(2)
    if conn is not None:
        conn.close()
