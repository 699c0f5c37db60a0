"""The window's side of the engine's child process: its events as Qt signals, in the GUI thread.

The process itself is :class:`~desktop_app.engine_process.client.EngineProcess` (Qt-free, shared
with the window's API, which reaches it directly): this adapter only hands the events its
reader thread receives to the GUI thread through a queued signal, so the window never waits on
the engine.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from desktop_app.engine.api import GenerateRequest, LoadedModels
from desktop_app.engine.stats import GenerationStats
from desktop_app.engine_process.client import EngineProcess, crash_reason
from desktop_app.engine_process.protocol import (
    Done,
    EngineEvent,
    Failed,
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
)

__all__ = ["EngineClient", "GenerationHandle", "crash_reason"]


class _ReaderRelay(QObject):
    """What the pipe-reader thread emits on, never the client itself: the client can be deleted
    by the GUI thread (the window closed) while the reader still delivers a message, and a
    thread emitting on a QObject being deleted crashes (see ui/models/download_widget.py). No parent:
    it lives as long as the process it listens to (the window's, for the app's life)."""

    received = Signal(int, object)
    ended = Signal(int, str)

    def on_event(self, run: int, event: EngineEvent) -> None:
        self.received.emit(run, event)

    def on_ended(self, run: int, reason: str) -> None:
        self.ended.emit(run, reason)


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
    """The engine process's events as signals (see :class:`EngineProcess`, :attr:`process`).

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
        self.process = EngineProcess()
        self.pending: dict[int, GenerationHandle] = {}  # requested and not ended, in order
        self._relay = _ReaderRelay()
        self._relay.received.connect(self._dispatch)  # queued: delivered in the GUI thread
        self._relay.ended.connect(self._on_ended)
        self.process.listen(self._relay)

    # ------------------------------------------------------------------ the process's state
    @property
    def pid(self) -> int | None:
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process.running

    @property
    def loading(self) -> bool:
        """A load was sent and its answer has not come yet."""
        return self.process.loading

    @property
    def busy(self) -> bool:
        return bool(self.pending)

    @property
    def info(self) -> Ready | None:
        return self.process.info

    @property
    def models(self) -> LoadedModels | None:
        return self.process.models

    @property
    def last_load(self) -> Load | None:
        return self.process.last_load

    @property
    def loaded_load(self) -> Load | None:
        """The load whose models are loaded now."""
        return self.process.loaded_load

    # ------------------------------------------------------------------ commands
    def start(self) -> None:
        self.process.start()

    def restart(self, load: Load | None = None) -> None:
        """A fresh process with ``load`` (default: the last models) loaded; the old one stopped in the background."""
        self.pending = {}
        self.process.restart(load)

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop the process and wait for it (used when the window closes)."""
        self.pending = {}
        self.process.shutdown(timeout)

    def load(self, command: Load) -> None:
        self.process.load(command)

    def generate(self, request: GenerateRequest) -> GenerationHandle:
        """Queue an answer (the engine answers in order: a chat in the window and API requests
        take turns); its handle reports the text, the stats and the end."""
        handle = GenerationHandle(self.process.generate(request), request, self)
        self.pending[handle.id] = handle  # before any of its events: they come through the event loop
        self.generation_started.emit(handle)
        return handle

    def count_prompt(self, request: GenerateRequest, keep: bool = False) -> int:
        """Ask how many tokens this chat request's prompt takes; ``prompt_counted`` answers with
        the id returned here (a newer question makes older ones unanswered, unless ``keep``)."""
        return self.process.count_prompt(request, keep=keep)

    def cancel(self, handle: GenerationHandle) -> None:
        """Stop this answer (at its next token, or before it starts)."""
        if handle.id in self.pending:
            self.process.cancel(handle.id)

    def history_changed(self, deleted: bool = False) -> None:
        """The chat history named in the last load changed: the engine re-syncs its n-gram cache
        in the background (``deleted``: messages went, their n-grams must go too)."""
        self.process.history_changed(deleted)

    # ------------------------------------------------------------------ events
    def _end(self, request_id: int) -> GenerationHandle | None:
        handle = self.pending.pop(request_id, None)
        if handle is None:
            return None
        handle.done = True
        handle.deleteLater()  # after the signals emitted below have been delivered
        return handle

    @Slot(int, object)
    def _dispatch(self, run: int, event: EngineEvent) -> None:
        if run != self.process.run:
            return  # a late message from a process that was restarted away
        handle = self.pending.get(getattr(event, "id", -1))
        if isinstance(event, Ready):
            self.engine_started.emit(event)
        elif isinstance(event, Loading):
            self.loading_started.emit(f"Loading {event.stage} {Path(event.path).name}…")
        elif isinstance(event, LoadProgressed):
            self.load_progress.emit(event.stage, event.fraction)
        elif isinstance(event, Loaded):
            self.model_loaded.emit(event.models)
        elif isinstance(event, LoadFailed):
            self.load_failed.emit(event)
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

    @Slot(int, str)
    def _on_ended(self, run: int, reason: str) -> None:
        if run != self.process.run:
            return
        lost, self.pending = list(self.pending.values()), {}
        self.engine_crashed.emit(reason)
        for handle in lost:  # the window's own answers end through engine_crashed; others hear it here
            handle.done = True
            handle.failed.emit(reason)
