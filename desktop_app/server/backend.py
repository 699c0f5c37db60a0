"""One engine, one queue: API requests (and, in the window, chats) take turns.

A :class:`Job` is one generation: its events arrive on a thread-safe queue, and setting its
``cancel`` event stops it at the next cycle (a client that disconnects). The queue is bounded:
past ``max_waiting`` waiting jobs (:data:`MAX_WAITING` unless the backend is given another),
:meth:`submit` raises :class:`Busy`.
"""

from __future__ import annotations

import itertools
import queue
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from desktop_app.engine.api import Embeddings, GenerateRequest
from desktop_app.engine.context_size import PromptSize
from desktop_app.engine.errors import EngineError
from desktop_app.engine.events import Event, Finished, PromptProgress
from desktop_app.engine.reasoning import ReasoningFormat
from desktop_app.engine.tool_calls import ToolFormat

if TYPE_CHECKING:
    from desktop_app.engine import Engine

MAX_WAITING = 16  # requests queued behind the running one before new ones get 503
# The engine thread needs the GIL back the moment each decode returns; Python hands it over only
# every switch interval (5 ms by default) while the HTTP thread holds it, a delay per token.
GIL_SWITCH_S = 0.0005


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
    """Requests served, for the window's status bar (read from the GUI thread)."""

    def __init__(self) -> None:
        self.requests = 0


class Failed(Exception):
    """The generation failed; the message is for the client (bad input or an engine error).
    ``status`` overrides the HTTP status (503 when the server is being switched off)."""

    def __init__(self, message: str, user_error: bool = True, status: int | None = None) -> None:
        self.user_error = user_error
        self.status = status
        super().__init__(message)


_END = object()


@dataclass
class Job:
    request: GenerateRequest
    id: int = field(default_factory=itertools.count(1).__next__)
    cancel: threading.Event = field(default_factory=threading.Event)
    events: queue.Queue[object] = field(default_factory=queue.Queue)
    # called (from the putting thread) after the answer's last event is in: a streaming handler
    # holding text back for a while wakes at once instead of making the client wait out its pause
    on_last: Callable[[], None] | None = None
    # how far the engine has read the prompt (None: not started yet), for a stream's keep-alives
    progress: PromptProgress | None = None

    def put(self, item: object) -> None:
        if isinstance(item, PromptProgress):
            self.progress = item
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
    """Where API requests are generated: the headless engine or the window's engine process."""

    def served_models(self) -> list[ServedModel]: ...
    def embed(self, texts: list[str], cancel: threading.Event | None = None) -> Embeddings: ...
    def reasoning_format(self) -> ReasoningFormat | None: ...
    def tool_format(self) -> ToolFormat | None: ...
    def submit(self, request: GenerateRequest) -> Job: ...
    def count_prompt(self, request: GenerateRequest) -> PromptSize: ...
    def waiting(self) -> int: ...


class EngineBackend:
    """The headless server's backend: an Engine run by one worker thread, jobs in order, at most
    ``max_waiting`` of them queued behind the running one. With ``prepare_auto`` the thread first
    measures Auto's costs (as the window does after a load), giving way the moment a request
    comes, so the first request does not pay for the measuring."""

    def __init__(self, engine: Engine, max_waiting: int = MAX_WAITING, prepare_auto: bool = False) -> None:
        sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_S))
        self.engine = engine
        self.max_waiting = max_waiting
        self._prepare_auto = prepare_auto
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._waiting = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="api-engine", daemon=True)
        self._thread.start()

    def served_models(self) -> list[ServedModel]:
        target = self.engine.target
        return [ServedModel(target.name, target.n_ctx, target.info.context_length or 0)] if target is not None else []

    def waiting(self) -> int:
        return self._waiting

    def reasoning_format(self) -> ReasoningFormat | None:
        """The markers of the loaded target's reasoning (None: its answers have none)."""
        return self.engine.prompts.reasoning.format

    def tool_format(self) -> ToolFormat | None:
        """The loaded target's tool-call syntax (generic JSON when its template has none; None: no target)."""
        return self.engine.prompts.tools.format

    def embed(self, texts: list[str], cancel: threading.Event | None = None) -> Embeddings:
        """Vectors for ``texts`` (called from a server thread: the engine's lock puts it between
        answers; ``cancel`` stops it before its next text); Failed with the engine's message when
        it cannot."""
        try:
            return self.engine.embed(texts, cancel)
        except EngineError as exc:
            raise Failed(str(exc)) from None

    def count_prompt(self, request: GenerateRequest) -> PromptSize:
        """The size of this chat request's prompt as an answer would render it (called from a
        server thread: the engine's lock puts it after a running answer); Failed saying why not."""
        try:
            return self.engine.count_prompt(request)
        except (EngineError, ValueError) as exc:
            raise Failed(str(exc)) from None

    def submit(self, request: GenerateRequest) -> Job:
        with self._lock:
            if self._waiting >= self.max_waiting:
                raise Busy(self._waiting)
            self._waiting += 1
        job = Job(request)
        self._jobs.put(job)
        return job

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join(timeout=5)

    def _run(self) -> None:
        if self._prepare_auto:
            try:
                self.engine.prepare_auto(should_stop=lambda: not self._jobs.empty())
            except EngineError:
                pass  # Auto measures on first use instead; that request says what failed
        while (job := self._jobs.get()) is not None:
            with self._lock:
                self._waiting -= 1
            try:
                if not job.cancel.is_set():
                    for event in self.engine.generate(job.request, job.cancel):
                        job.put(event)
            except (EngineError, ValueError) as exc:
                job.put(Failed(str(exc)))
            except Exception as exc:  # noqa: BLE001 - reported to the client, the server lives on
                job.put(Failed(f"{type(exc).__name__}: {exc}", user_error=False))
            finally:
                job.finish()
