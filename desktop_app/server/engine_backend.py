"""The API's one backend, in `specchat serve` and in the window alike: every request goes to the
engine's child process through :class:`~desktop_app.engine_process.client.EngineProcess`.

Nothing here waits on Qt or on the GUI thread: a request's events go from the process's reader
thread straight into its :class:`Job`'s queue, and a client that leaves cancels its work in the
engine at once (:class:`Cancellation`). When the engine process dies, every waiting request is
answered 503 with the reason; with ``restart_after_crash`` (`specchat serve`) a fresh process
loads the same models, while the window leaves that to its user (its crash banner).
"""

from __future__ import annotations

import threading
from concurrent import futures
from typing import Any

from desktop_app.engine.api import Embeddings, GenerateRequest
from desktop_app.engine.context_size import PromptSize
from desktop_app.engine.events import Finished, StatsUpdate, TextChunk
from desktop_app.engine.reasoning import ReasoningFormat
from desktop_app.engine.tool_calls import ToolFormat
from desktop_app.engine_process import protocol
from desktop_app.engine_process.client import EngineLost, EngineProcess
from desktop_app.server.backend import MAX_WAITING, Busy, Failed, Job, ServedModel

SWITCHED_OFF = "the API server was switched off"
POLL_S = 0.05  # how often a waiting embedding request looks whether its client left
COUNT_WAIT_S = 120.0  # a count waits for a running answer; past this the engine is taken as lost


class EngineBackend:
    """Answers the API's handlers (called from the server's threads) with the engine process."""

    def __init__(
        self, engine: EngineProcess, max_waiting: int = MAX_WAITING, restart_after_crash: bool = False
    ) -> None:
        self.engine = engine
        self.max_waiting = max_waiting
        self._restart = restart_after_crash
        self._lock = threading.Lock()
        self._jobs: dict[int, Job] = {}  # answers asked for and not ended
        self._waits: set[futures.Future[Any]] = set()  # embeddings and counts not answered yet
        # the engine run that loaded its models (a crash while loading them is not retried)
        self._serving_run = engine.run if engine.models is not None else 0
        engine.listen(self)

    # ------------------------------------------------------------------ what is served
    def served_models(self) -> list[ServedModel]:
        models = self.engine.models
        target = models.target if models is not None else None
        return [ServedModel(target.name, target.n_ctx, target.n_ctx_train)] if target is not None else []

    def waiting(self) -> int:
        return len(self._jobs)

    def reasoning_format(self) -> ReasoningFormat | None:
        """The markers of the loaded target's reasoning (None: its answers have none)."""
        models = self.engine.models
        return models.target.reasoning_format if models is not None else None

    def tool_format(self) -> ToolFormat | None:
        """The loaded target's tool-call syntax (generic JSON when its template has none; None: no target)."""
        models = self.engine.models
        return models.target.tool_format if models is not None else None

    def _unavailable(self) -> Failed | None:
        """Why no request can be answered now (None: one can)."""
        if not self.engine.running:
            return Failed("the engine is not running (it stopped, or is restarting); retry in a moment", False, 503)
        if self.engine.models is None:
            loading = " (one is loading; retry when it is loaded)" if self.engine.loading else ""
            return Failed(f"no model is loaded{loading}", False, 503)
        return None

    def _lost(self, lost: EngineLost) -> Failed:
        then = "it is restarting, retry in a moment" if self._restart else "retry when it is back"
        return Failed(f"{lost.reason}; {then}", user_error=False, status=503)

    # ------------------------------------------------------------------ answers
    def submit(self, request: GenerateRequest) -> Job:
        with self._lock:
            if len(self._jobs) > self.max_waiting:  # the running one and those queued
                raise Busy(len(self._jobs) - 1)
            job = Job(request)
            self._jobs[job.id] = job
        why = self._unavailable()
        if why is not None:
            self._end(job, why)
            return job
        request_id = self.engine.generate(request, lambda event: self._on_event(job, event), raw=True)
        job.cancel.on_set = lambda: self.engine.cancel(request_id)
        if job.cancel.is_set():  # its client left before the hook was in
            self.engine.cancel(request_id)
        return job

    def _on_event(self, job: Job, event: protocol.EngineEvent | EngineLost) -> None:
        """A job's event from the engine (on the process's reader thread), as the handlers take it."""
        if isinstance(event, protocol.Pieces):
            for text, drafter in event.pieces:
                job.put(TextChunk(text, from_draft=bool(drafter), drafter=drafter))
        elif isinstance(event, protocol.PromptRead):
            job.put(event.progress)  # a stream's headers go once the prompt is made; then its keep-alives
        elif isinstance(event, protocol.LiveStats):
            job.put(StatsUpdate(event.stats))
        elif isinstance(event, protocol.Done):
            job.put(Finished(event.text, [], event.stats))
            self._end(job, None)
        elif isinstance(event, protocol.Failed):
            self._end(job, Failed(event.message, event.user_error))
        elif isinstance(event, EngineLost):
            self._end(job, self._lost(event))

    def _end(self, job: Job, failure: Failed | None) -> None:
        with self._lock:
            if self._jobs.pop(job.id, None) is None:
                return  # ended already (the server was switched off meanwhile)
        if failure is not None:
            job.put(failure)
        job.finish()

    # ------------------------------------------------------------------ embeddings and counts
    def embed(self, texts: list[str], cancel: threading.Event | None = None) -> Embeddings:
        """Vectors for ``texts``, in turn with the answers queued before them (called from a
        server thread, which waits). Busy when the queue is full, Failed saying why it cannot;
        ``cancel`` set meanwhile cancels it in the engine too (before its next text)."""
        answer: futures.Future[Embeddings] = futures.Future()
        with self._lock:
            queued = len(self._jobs) + len(self._waits)
            if queued > self.max_waiting:
                raise Busy(queued - 1)
            self._waits.add(answer)
        try:
            why = self._unavailable()
            if why is not None:
                raise why
            request_id = self.engine.embed(texts, lambda reply: self._settle(answer, reply))
            while True:
                try:
                    return answer.result(timeout=POLL_S)
                except futures.TimeoutError:
                    if cancel is not None and cancel.is_set():
                        self.engine.cancel(request_id)
                        raise Failed("the embeddings request was cancelled") from None
        finally:
            with self._lock:
                self._waits.discard(answer)

    def count_prompt(self, request: GenerateRequest) -> PromptSize:
        """The size of this chat request's prompt as an answer would render it (after a running
        answer; called from a server thread, which waits); Failed saying why not."""
        why = self._unavailable()
        if why is not None:
            raise why
        answer: futures.Future[PromptSize] = futures.Future()
        with self._lock:
            self._waits.add(answer)
        try:
            self.engine.count_prompt(request, lambda reply: self._settle(answer, reply), keep=True)
            return answer.result(timeout=COUNT_WAIT_S)
        except futures.TimeoutError:
            raise Failed("the engine did not count the prompt in time", user_error=False, status=503) from None
        finally:
            with self._lock:
                self._waits.discard(answer)

    def _settle(self, answer: futures.Future[Any], reply: protocol.EngineEvent | EngineLost) -> None:
        """Set an embedding's or a count's answer from the engine's reply."""
        if answer.done():
            return  # the server was switched off meanwhile: answered already
        if isinstance(reply, EngineLost):
            answer.set_exception(self._lost(reply))
        elif isinstance(reply, protocol.Embedded):
            if reply.result is None:  # too long a text (400), or the engine could not (500)
                answer.set_exception(Failed(reply.error, user_error=reply.user_error))
            else:
                answer.set_result(reply.result)
        elif isinstance(reply, protocol.PromptCounted):
            if reply.size is None:
                answer.set_exception(Failed(reply.error))
            else:
                answer.set_result(reply.size)

    # ------------------------------------------------------------------ the engine's life
    def close(self) -> None:
        """The server is being switched off: every waiting request is answered now, 503, so
        uvicorn's graceful shutdown finds none left; their work in the engine is cancelled."""
        with self._lock:
            jobs = list(self._jobs.values())
            waits = list(self._waits)
        for job in jobs:
            job.cancel.set()
            self._end(job, Failed(SWITCHED_OFF, user_error=False, status=503))
        for answer in waits:
            if not answer.done():
                answer.set_exception(Failed(SWITCHED_OFF, user_error=False, status=503))

    def on_event(self, run: int, event: protocol.EngineEvent) -> None:
        if isinstance(event, protocol.Loaded):
            self._serving_run = run

    def on_ended(self, run: int, reason: str) -> None:
        """The engine process died (its waiting requests were answered already): with
        ``restart_after_crash``, a fresh one loads the same models, unless it died loading them."""
        if self._restart and run == self._serving_run:
            self.engine.restart()
