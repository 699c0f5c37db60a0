"""What the API's handlers ask of the engine, and the one backend that answers them.

One engine, one queue: API requests (and, in the window, its chats) take turns in the engine's
process. A :class:`Job` is one generation: its events arrive on a thread-safe queue, and setting
its ``cancel`` stops it at the next cycle (a client that disconnects). The queue is bounded: past
``max_waiting`` waiting jobs (:data:`MAX_WAITING` unless the backend is given another),
:meth:`~EngineBackend.submit` raises :class:`Busy`. :class:`EngineBackend` (engine_backend.py)
serves `specchat serve` and the window's *Serve API* alike.
"""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from desktop_app.engine.api import Embeddings, GenerateRequest
from desktop_app.engine.context_size import PromptSize
from desktop_app.engine.events import Event, Finished, PromptProgress
from desktop_app.engine.reasoning import ReasoningFormat
from desktop_app.engine.tool_calls import ToolFormat
from desktop_app.server.request_log import RequestLog

MAX_WAITING = 16  # requests queued behind the running one before new ones get 503


@dataclass(frozen=True)
class ServedModel:
    """A model the API serves: its id (the file's name), the context it serves in tokens (what
    was asked, up to what the model was trained for: llama.cpp serves no more) and the context it
    was trained for (0: unknown)."""

    id: str
    context_length: int
    n_ctx_train: int = 0


class Busy(Exception):
    """The queue is full; the client should retry after ``retry_after_s``."""

    def __init__(self, waiting: int, retry_after_s: int = 2) -> None:
        self.retry_after_s = retry_after_s
        super().__init__(f"the engine is busy with {waiting} queued requests; retry in {retry_after_s} s")


class Counter:
    """Requests served, for the window's status bar, and the last ones for its API page (read
    from the GUI thread)."""

    def __init__(self) -> None:
        self.requests = 0
        self.log = RequestLog()


class Failed(Exception):
    """The generation failed; the message is for the client (bad input or an engine error).
    ``status`` overrides the HTTP status (503 when the server is being switched off)."""

    def __init__(self, message: str, user_error: bool = True, status: int | None = None) -> None:
        self.user_error = user_error
        self.status = status
        super().__init__(message)


_END = object()


class Cancellation(threading.Event):
    """A job's cancel flag: set by the handler when its client goes away; ``on_set`` (the
    backend's) passes it on to the engine at once."""

    def __init__(self) -> None:
        super().__init__()
        self.on_set: Callable[[], None] | None = None

    def set(self) -> None:
        if self.is_set():
            return
        super().set()
        if (on_set := self.on_set) is not None:
            on_set()


@dataclass
class Job:
    request: GenerateRequest
    id: int = field(default_factory=itertools.count(1).__next__)
    cancel: Cancellation = field(default_factory=Cancellation)
    events: queue.Queue[object] = field(default_factory=queue.Queue)
    # called (from the putting thread) after the answer's last event is in: a streaming handler
    # holding text back for a while wakes at once instead of making the client wait out its pause
    on_last: Callable[[], None] | None = None
    # how far the engine has read the prompt (None: not started yet), for a stream's keep-alives
    progress: PromptProgress | None = None
    last: Finished | None = None  # the answer's end, once it came (the API page's token counts)

    def put(self, item: object) -> None:
        if isinstance(item, PromptProgress):
            self.progress = item
        elif isinstance(item, Finished):
            self.last = item
        self.events.put(item)
        on_last = self.on_last  # read once: the handler clears it from another thread when it ends
        if on_last is not None and (item is _END or isinstance(item, (Finished, Failed))):
            on_last()

    def next(self, timeout: float | None = None) -> Event | None:
        """The next event; None after the last one. Raises Failed when the generation failed."""
        item = self.events.get(timeout=timeout)
        if item is _END:
            return None
        if isinstance(item, Failed):
            raise item
        return item  # type: ignore[return-value]  # only events and the two markers are put

    def ready(self) -> list[Event | None]:
        """Every event already waiting, without blocking (None marks the end)."""
        out: list[Event | None] = []
        while True:
            try:
                item = self.events.get_nowait()
            except queue.Empty:
                return out
            if isinstance(item, Failed):
                self.events.put(item)  # raised by the next next()
                return out
            out.append(None if item is _END else item)  # type: ignore[arg-type]
            if item is _END:
                return out

    def finish(self) -> None:
        self.put(_END)

    def iterate(self) -> Iterator[Event]:
        while (event := self.next()) is not None:
            yield event


class GenerationBackend(Protocol):
    """Where API requests are generated (:class:`EngineBackend`, or a test's stand-in)."""

    def served_models(self) -> list[ServedModel]: ...
    def embed(self, texts: list[str], cancel: threading.Event | None = None) -> Embeddings: ...
    def reasoning_format(self) -> ReasoningFormat | None: ...
    def tool_format(self) -> ToolFormat | None: ...
    def submit(self, request: GenerateRequest) -> Job: ...
    def count_prompt(self, request: GenerateRequest) -> PromptSize: ...
    def waiting(self) -> int: ...
