"""The one Qt-side owner of the engine's child process.

Commands go down a ``multiprocessing`` pipe; a reader thread only receives events and hands
them to the GUI thread through a queued signal, so the window never waits on the engine.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
import time
from collections import deque
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from desktop_app.engine.api import GenerateRequest, LoadedModels
from desktop_app.engine.stats import GenerationStats
from desktop_app.engine_process import service
from desktop_app.engine_process.pending_embeds import EmbedAnswer, PendingEmbeds
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
    LiveStats,
    Load,
    Loaded,
    LoadFailed,
    Loading,
    LoadProgressed,
    Pieces,
    PromptCounted,
    PromptRead,
    Ready,
    Shutdown,
)
from desktop_app.ui.thread_relay import hold

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


class _ReaderRelay(QObject):
    """What the pipe-reader thread emits on, never the client itself: the client can be deleted
    by the GUI thread (the window closed) while the reader still delivers a message, and a
    thread emitting on a QObject being deleted crashes (see ui/download_widget.py). No parent;
    the reader holds it and hands it back to the GUI thread with ``deleteLater`` at the end."""

    received = Signal(object)
    ended = Signal(object)


class GenerationHandle(QObject):
    """One answer being generated: its own signals, emitted in the GUI thread.

    Signals:
        prompt_progress(PromptProgress): how much of the prompt the engine has read (first: how
            many of the oldest messages it left out), up to 20 times a second, before any text.
        token_received(str, str): answer text, and the DrafterKind value of the drafter whose accepted
            tokens made it ("" for the target's own text).
        stats_updated(GenerationStats): live figures about ten times a second; their ``ttft_s``
            counts from the request (Send), the engine's own figure is ``engine_ttft_s``.
        finished(Done): the final text and stats; ``stats.finish_reason`` is FinishReason.CANCELLED after a stop.
        failed(str): the generation failed with this message (not emitted when the process dies:
            ``EngineClient.engine_crashed`` says that).
    """

    prompt_progress = Signal(object)
    token_received = Signal(str, str)
    stats_updated = Signal(object)
    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, request_id: int, request: GenerateRequest, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.id = request_id
        self.request = request
        self.done = False
        self.sent_at = time.perf_counter()  # when it was asked for (Send): time to first token counts from here
        self.first_text_at: float | None = None

    def timed_from_send(self, stats: GenerationStats) -> GenerationStats:
        """``stats`` with the time to first token counted from Send (the engine's own kept apart)."""
        if self.first_text_at is not None and not stats.engine_ttft_s:
            stats.engine_ttft_s = stats.ttft_s
            stats.ttft_s = self.first_text_at - self.sent_at
        return stats


class EngineClient(QObject):
    """Runs the engine in a child process and turns its events into signals.

    Signals:
        engine_started(Ready): the process is up: pid, backend, device.
        loading_started(str): a model is being loaded (a line to show).
        load_progress(str, float): "target" or "draft" and how much of it is loaded (0..1, rising,
            ending on 1.0); a few dozen times a second at most.
        model_loaded(LoadedModels): target (and draft) loaded.
        load_failed(LoadFailed): loading failed: why, what stays loaded (``models``, also kept
            in :attr:`models`) and the file at fault, if any.
        generation_started(GenerationHandle): an answer was requested; its handle reports it.
        prompt_counted(int, PromptSize | None, str): the answer to :meth:`count_prompt` with that
            id: the prompt's size, or None and why it could not be counted.
        engine_crashed(str): the process died; a human reason. ``restart()`` brings it back.
    """

    engine_started = Signal(object)
    loading_started = Signal(str)
    load_progress = Signal(str, float)
    model_loaded = Signal(object)
    load_failed = Signal(object)
    generation_started = Signal(object)
    prompt_counted = Signal(int, object, str)
    engine_crashed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ctx = multiprocessing.get_context("spawn")
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None
        self._reader: threading.Thread | None = None
        self._next_id = 0
        self.pending: dict[int, GenerationHandle] = {}  # requested and not ended, in order
        self._loads: deque[Load] = deque()  # sent and not answered yet, in order
        self._embeds = PendingEmbeds()
        self.last_load: Load | None = None
        self.loaded_load: Load | None = None  # the load whose models are loaded now
        self.info: Ready | None = None
        self.models: LoadedModels | None = None
        self._fatal: str | None = None  # why the process said it is ending

    # ------------------------------------------------------------------ process
    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.is_alive()

    @property
    def loading(self) -> bool:
        """A load was sent and its answer has not come yet."""
        return bool(self._loads)

    @property
    def busy(self) -> bool:
        return bool(self.pending)

    def start(self) -> None:
        if self.running:
            return
        parent_conn, child_conn = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(target=service.serve, args=(child_conn,), name="specchat-engine", daemon=True)
        process.start()
        child_conn.close()  # so the reader sees EOF when the child dies
        self._process, self._conn = process, parent_conn
        self._fatal = None
        self.pending = {}
        self._loads.clear()
        self.models = None
        self.loaded_load = None
        relay = _ReaderRelay()
        relay.received.connect(self._dispatch)  # queued: delivered in the GUI thread, dropped once deleted
        relay.ended.connect(self._on_ended)
        self._reader = threading.Thread(
            target=_read, args=(parent_conn, process, relay), name="engine-reader", daemon=True
        )
        hold(relay, self._reader)
        self._reader.start()

    def restart(self, load: Load | None = None) -> None:
        """A fresh process with ``load`` (default: the last models) loaded; the old one stopped in the background."""
        self._detach(in_background=True)  # the GUI never waits for the old process to exit
        self.start()
        load = load or self.last_load
        if load is not None:
            self.load(load)

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop the process and wait for it (used when the window closes)."""
        detached = self._detach()
        if detached is not None:
            _reap(*detached, timeout=timeout)

    def _detach(self, in_background: bool = False) -> _Detached | None:
        """Forget the current process after asking it to stop; with ``in_background`` a thread reaps it."""
        process, conn, reader = self._process, self._conn, self._reader
        self._process = self._conn = self._reader = None
        self.pending = {}
        self._loads.clear()
        self._embeds.lose_all("the engine was stopped before it answered (restarted, or the window closed)")
        self.models = None
        self.loaded_load = None
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

    def _send(self, command: Command) -> bool:
        if self._conn is None:
            return False
        try:
            self._conn.send(command)
            return True
        except (BrokenPipeError, OSError):
            return False

    # ------------------------------------------------------------------ commands
    def load(self, command: Load) -> None:
        self.last_load = command
        self.start()
        self._loads.append(command)
        self._send(command)

    def generate(self, request: GenerateRequest) -> GenerationHandle:
        """Queue an answer (the engine answers in order: a chat in the window and API requests
        take turns); its handle reports the text, the stats and the end."""
        self._next_id += 1
        handle = GenerationHandle(self._next_id, request, self)
        self.pending[handle.id] = handle
        self._send(Generate(handle.id, request))
        self.generation_started.emit(handle)
        return handle

    def count_prompt(self, request: GenerateRequest, keep: bool = False) -> int:
        """Ask how many tokens this chat request's prompt takes; ``prompt_counted`` answers with
        the id returned here (a newer question makes older ones unanswered, unless ``keep``)."""
        self._next_id += 1
        self._send(CountPrompt(self._next_id, request, keep))
        return self._next_id

    def embed(self, texts: list[str], answer: EmbedAnswer) -> int:
        """Vectors for ``texts`` from the loaded target, in turn; ``answer`` is called once (PendingEmbeds). Its id."""
        self._next_id += 1
        self._embeds.add(self._next_id, answer)
        if not self._send(Embed(self._next_id, tuple(texts))) and self._conn is None:  # no process: none other waits
            self._embeds.lose_all("the engine is not running")
        return self._next_id

    def cancel(self, handle: GenerationHandle | int) -> None:
        """Stop this answer (at its next token, or before it starts) or an embedding, by id (before its next text)."""
        if isinstance(handle, int) or handle.id in self.pending:
            self._send(Cancel(handle if isinstance(handle, int) else handle.id))

    def history_changed(self, deleted: bool = False) -> None:
        """The chat history named in the last load changed: the engine re-syncs its n-gram cache
        in the background (``deleted``: messages went, their n-grams must go too)."""
        self._send(HistoryChanged(deleted))

    # ------------------------------------------------------------------ events
    def _end(self, request_id: int) -> GenerationHandle | None:
        handle = self.pending.pop(request_id, None)
        if handle is None:
            return None
        handle.done = True
        handle.deleteLater()  # after the signals emitted below have been delivered
        return handle

    @Slot(object)
    def _dispatch(self, item: tuple[BaseProcess, EngineEvent]) -> None:
        process, event = item
        if process is not self._process:
            return  # a late message from a process that was restarted away
        handle = self.pending.get(getattr(event, "id", -1))
        if isinstance(event, Ready):
            self.info = event
            self.engine_started.emit(event)
        elif isinstance(event, Loading):
            self.loading_started.emit(f"Loading {event.stage} {Path(event.path).name}…")
        elif isinstance(event, LoadProgressed):
            self.load_progress.emit(event.stage, event.fraction)
        elif isinstance(event, Loaded):
            self.loaded_load = self._loads.popleft() if self._loads else self.last_load
            self.models = event.models
            self.model_loaded.emit(event.models)
        elif isinstance(event, LoadFailed):
            self._load_failed(event)
        elif isinstance(event, PromptRead):
            if handle is not None:
                handle.prompt_progress.emit(event.progress)
        elif isinstance(event, Pieces):
            if handle is not None:
                handle.first_text_at = handle.first_text_at or time.perf_counter()
                for text, drafter in event.pieces:
                    handle.token_received.emit(text, drafter)
        elif isinstance(event, LiveStats):
            if handle is not None:
                handle.stats_updated.emit(handle.timed_from_send(event.stats))
        elif isinstance(event, Done):
            ended = self._end(event.id)
            if ended is not None:
                ended.timed_from_send(event.stats)
                ended.finished.emit(event)
        elif isinstance(event, Failed):
            ended = self._end(event.id)
            if ended is not None:
                ended.failed.emit(event.message)
        elif isinstance(event, PromptCounted):
            self.prompt_counted.emit(event.id, event.size, event.error)
        elif isinstance(event, Embedded):
            self._embeds.answer(event)
        elif isinstance(event, Fatal):
            self._fatal = event.message

    def _load_failed(self, event: LoadFailed) -> None:
        failed = self._loads.popleft() if self._loads else None
        self.models = event.models
        if event.models is None:
            self.loaded_load = None
        elif failed is not None and failed.target and event.models.target.path == failed.target:
            self.loaded_load = failed  # the new target came in before the failure
        self.load_failed.emit(event)

    @Slot(object)
    def _on_ended(self, process: BaseProcess) -> None:
        if process is not self._process:
            return
        process.join(2)
        reason = self._fatal or crash_reason(process.exitcode)
        if self._conn is not None:
            self._conn.close()
        self._process = self._conn = None
        lost, self.pending = list(self.pending.values()), {}
        self._loads.clear()
        self.models = None
        self.loaded_load = None
        self._embeds.lose_all(reason)
        self.engine_crashed.emit(reason)
        for handle in lost:  # the window's own answers end through engine_crashed; others hear it here
            handle.done = True
            handle.failed.emit(reason)


def _read(conn: Connection, process: BaseProcess, relay: _ReaderRelay) -> None:
    """The reader thread: every message from the engine process, then its end, through ``relay``."""
    try:
        while True:
            try:
                message = conn.recv()
            except Exception:  # noqa: BLE001 - EOF, a closed pipe or a half-written message from a dying child
                break
            relay.received.emit((process, message))
        relay.ended.emit(process)
        relay.deleteLater()
    except RuntimeError:
        # The interpreter is exiting with this thread still reading (the engine process was
        # ending too): Qt's objects are already torn down, and there is nobody left to tell.
        pass


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
