"""The window's "Serve API" switch: the OpenAI-compatible API on the models the window loaded.

One engine, one queue: API requests go through the window's :class:`EngineClient`, whose engine
process answers in order, so a chat in the window and API requests take turns. The HTTP server
(uvicorn) runs on its own thread; it hands each request to :class:`WindowBackend` through a
queued signal, and the backend starts it from the GUI thread and feeds its events back into the
request's thread-safe queue. An embedding request, or a prompt to count, waits on a Future instead,
which the GUI thread sets when the engine process answers, or says why it cannot.
"""

from __future__ import annotations

import socket
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from desktop_app.engine.api import API_HOST, Embeddings, FinishReason, GenerateRequest
from desktop_app.engine.context_size import PromptSize
from desktop_app.engine.events import Finished, StatsUpdate, TextChunk
from desktop_app.engine.reasoning import ReasoningFormat
from desktop_app.engine.stats import GenerationStats
from desktop_app.engine.tool_calls import ToolFormat
from desktop_app.engine_process.pending_embeds import EngineLost
from desktop_app.engine_process.protocol import Done, Embedded
from desktop_app.server import backend as server_backend
from desktop_app.server.backend import Busy, Counter, Failed, Job
from desktop_app.server.limits import DEFAULT_LIMITS
from desktop_app.ui.engine_client import EngineClient, GenerationHandle

if TYPE_CHECKING:
    import uvicorn

CANCEL_POLL_MS = 50  # how often a request whose client went away is looked for
SHUTDOWN_WAIT_S = DEFAULT_LIMITS.shutdown_grace_s + 1  # uvicorn's grace, then its own cancelling
SWITCHED_OFF = "the API server was switched off"
COUNT_WAIT_S = 120.0  # a count waits for a running answer; past this the engine is taken as lost


class WindowBackend(QObject):
    """``GenerationBackend`` over the window's engine client. Lives in the GUI thread;
    :meth:`submit` and :meth:`served_models` are called from the server's threads."""

    _submitted = Signal(object)
    _embed_asked = Signal(object, object)  # the texts, and the Future their vectors are set on
    _count_asked = Signal(object, object)  # a chat request, and the Future its prompt's size is set on
    _embed_cancelled = Signal(object)  # the Future of an embedding whose client went away

    def __init__(self, client: EngineClient, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.client = client
        self._lock = threading.Lock()
        self._active: dict[int, tuple[Job, GenerationHandle | None]] = {}
        self._embeds: set[Future[Embeddings]] = set()  # embedding requests not answered yet
        self._submitted.connect(self._start)
        self._embed_asked.connect(self._embed)
        self._embed_ids: dict[Future[Embeddings], int] = {}  # the engine client's ids of those sent (GUI thread)
        self._embed_cancelled.connect(self._cancel_embed)
        self._counts: dict[int, Future[PromptSize]] = {}  # by the engine client's question id (GUI thread)
        self._count_asked.connect(self._count)
        client.prompt_counted.connect(self._counted)
        self._cancel_timer = QTimer(self)
        self._cancel_timer.setInterval(CANCEL_POLL_MS)
        self._cancel_timer.timeout.connect(self._forward_cancels)  # runs while requests do (_start)

    def served_models(self) -> list[server_backend.ServedModel]:
        models = self.client.models
        target = models.target if models is not None else None
        return [server_backend.ServedModel(target.name, target.n_ctx, target.n_ctx_train)] if target is not None else []

    def waiting(self) -> int:
        return len(self._active)

    def reasoning_format(self) -> ReasoningFormat | None:
        models = self.client.models
        return models.target.reasoning_format if models is not None else None

    def tool_format(self) -> ToolFormat | None:
        models = self.client.models
        return models.target.tool_format if models is not None else None

    def embed(self, texts: list[str], cancel: threading.Event | None = None) -> Embeddings:
        """Vectors for ``texts`` from the window's engine process, in turn with the answers queued
        before them. Called from a server thread, which waits; the GUI thread only sends the
        command and sets the answer. Busy when the queue is full, Failed saying why it cannot;
        ``cancel`` set meanwhile cancels it in the engine too (before its next text)."""
        answer: Future[Embeddings] = Future()
        with self._lock:
            queued = len(self._active) + len(self._embeds)
            if queued > server_backend.MAX_WAITING:  # the running one and those queued
                raise Busy(queued - 1)
            self._embeds.add(answer)
        self._embed_asked.emit(texts, answer)
        try:
            while True:
                try:
                    return answer.result(timeout=CANCEL_POLL_MS / 1000)
                except TimeoutError:
                    if cancel is not None and cancel.is_set():
                        self._embed_cancelled.emit(answer)
                        raise Failed("the embeddings request was cancelled") from None
        finally:
            with self._lock:
                self._embeds.discard(answer)

    @Slot(object, object)
    def _embed(self, texts: list[str], answer: Future[Embeddings]) -> None:
        if answer.done():  # the server was switched off before it started
            return
        if not self.client.running:
            why = "the window's engine is not running (it stopped, or is restarting); retry when it is back"
            answer.set_exception(Failed(why, user_error=False, status=503))
        elif self.client.models is None:
            loading = " (one is loading; retry when it is loaded)" if self.client.loading else ""
            answer.set_exception(Failed(f"no model is loaded in the window{loading}", user_error=False, status=503))
        else:
            self._embed_ids[answer] = self.client.embed(texts, lambda reply: self._embedded(answer, reply))

    def _embedded(self, answer: Future[Embeddings], reply: Embedded | EngineLost) -> None:
        self._embed_ids.pop(answer, None)
        _answer_embedding(answer, reply)

    @Slot(object)
    def _cancel_embed(self, answer: Future[Embeddings]) -> None:
        request_id = self._embed_ids.pop(answer, None)
        if request_id is not None:
            self.client.cancel(request_id)

    def count_prompt(self, request: GenerateRequest) -> PromptSize:
        """The size of this chat request's prompt, counted by the window's engine process (after
        a running answer). Called from a server thread, which waits; Failed saying why not."""
        answer: Future[PromptSize] = Future()
        self._count_asked.emit(request, answer)
        try:
            return answer.result(timeout=COUNT_WAIT_S)
        except TimeoutError:
            raise Failed("the window's engine did not count the prompt in time", user_error=False, status=503) from None

    @Slot(object, object)
    def _count(self, request: GenerateRequest, answer: Future[PromptSize]) -> None:
        if not self.client.running or self.client.models is None:
            answer.set_exception(Failed("no model is loaded in the window", user_error=False, status=503))
            return
        self._counts[self.client.count_prompt(request, keep=True)] = answer

    @Slot(int, object, str)
    def _counted(self, asked: int, size: PromptSize | None, error: str) -> None:
        answer = self._counts.pop(asked, None)  # None: the window's own question (its context meter)
        if answer is None or answer.done():
            return
        if size is None:
            answer.set_exception(Failed(error))
        else:
            answer.set_result(size)

    def submit(self, request: GenerateRequest) -> Job:
        with self._lock:
            if len(self._active) > server_backend.MAX_WAITING:  # the running one and those queued
                raise Busy(len(self._active) - 1)
            job = Job(request)
            self._active[job.id] = (job, None)
        self._submitted.emit(job)
        return job

    @Slot(object)
    def _start(self, job: Job) -> None:
        if job.cancel.is_set():  # its client left, or the server was switched off, before it started
            self._end(job, None)
            return
        if not self.client.running or self.client.models is None:
            self._end(job, Failed("no model is loaded in the window", user_error=False))
            return
        handle = self.client.generate(job.request)
        with self._lock:
            self._active[job.id] = (job, handle)
        if not self._cancel_timer.isActive():  # idle otherwise: each wake-up takes a core from the engine
            self._cancel_timer.start()
        handle.token_received.connect(
            lambda text, drafter: job.put(TextChunk(text, from_draft=bool(drafter), drafter=drafter))
        )
        handle.stats_updated.connect(lambda stats: job.put(StatsUpdate(stats)))
        handle.prompt_progress.connect(job.put)  # a stream's headers go once the prompt is made; then its keep-alives
        handle.finished.connect(lambda done: self._finished(job, done))
        handle.failed.connect(lambda message: self._end(job, Failed(message)))

    def _finished(self, job: Job, done: Done) -> None:
        job.put(Finished(done.text, [], done.stats))
        self._end(job, None)

    def _end(self, job: Job, failure: Failed | None) -> None:
        if failure is not None:
            job.put(failure)
        job.finish()
        with self._lock:
            self._active.pop(job.id, None)

    def cancel_all(self) -> None:
        """Stop every API request (the server is being switched off): each handler is answered
        now, 503, so uvicorn's graceful shutdown finds none left to cancel; the engine's jobs are
        cancelled and their late events go to queues nobody reads."""
        with self._lock:
            jobs = [job for job, _ in self._active.values()]
            embeds = list(self._embeds)
        for job in jobs:
            job.cancel.set()
            job.put(Failed(SWITCHED_OFF, user_error=False, status=503))
            job.finish()
        waiting: list[Future[Any]] = [*embeds, *self._counts.values()]
        for answer in waiting:
            if not answer.done():
                answer.set_exception(Failed(SWITCHED_OFF, user_error=False, status=503))
        self._counts.clear()
        self._forward_cancels()

    @Slot()
    def _forward_cancels(self) -> None:
        with self._lock:
            gone = [(job, handle) for job, handle in self._active.values() if job.cancel.is_set()]
            if not self._active:
                self._cancel_timer.stop()
        for job, handle in gone:
            if handle is not None and not handle.done:
                self.client.cancel(handle)
            elif handle is None:
                self._finished(job, Done(job.id, "", GenerationStats(finish_reason=FinishReason.CANCELLED)))


def _answer_embedding(answer: Future[Embeddings], reply: Embedded | EngineLost) -> None:
    """Set an embedding request's answer from the engine's reply (in the GUI thread)."""
    if answer.done():
        return  # the server was switched off meanwhile: answered already
    if isinstance(reply, EngineLost):
        answer.set_exception(Failed(reply.reason, user_error=False, status=503))
    elif reply.result is None:  # too long a text (400), or the engine could not (500)
        answer.set_exception(Failed(reply.error, user_error=reply.user_error))
    else:
        answer.set_result(reply.result)


class ApiServer(QObject):
    """Runs uvicorn on a thread for the window.

    Signals:
        started(str): the base URL the API answers on.
        stopped(): the server was switched off.
        failed(str): it could not start (the port is taken...).
    """

    started = Signal(str)
    stopped = Signal()
    failed = Signal(str)

    def __init__(self, client: EngineClient, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.backend = WindowBackend(client, self)
        self.counter = Counter()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self, port: int, api_key: str | None = None, host: str = API_HOST) -> bool:
        if self._server is not None:
            return True
        try:  # say "port taken" now, rather than from a thread that just dies
            with socket.socket() as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind((host, port))
        except OSError as exc:
            self.failed.emit(f"The API cannot listen on {host}:{port}: {exc.strerror or exc}")
            return False
        # Here, not at start-up: the window opens without the HTTP stack.
        from desktop_app.server.api_key import ApiKeyError, resolve_api_key
        from desktop_app.server.app import create_app
        from desktop_app.server.http_server import base_url, make_server

        try:  # the setting, else SPECCHAT_API_KEY, as for `specchat serve`
            key = resolve_api_key(api_key or None)
        except ApiKeyError as exc:
            self.failed.emit(f"The API was not started: {exc}")
            return False
        app = create_app(self.backend, key, self.counter)
        self._server = make_server(app, host, port)
        self._thread = threading.Thread(target=self._server.run, name="api-server", daemon=True)
        self._thread.start()
        self.url = base_url(host, port)
        self.started.emit(self.url)
        return True

    def stop(self) -> None:
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is not None:
            self.backend.cancel_all()  # every handler is answered now, not when its engine job would end
            # A graceful exit: uvicorn closes idle connections and waits for the handlers, which
            # end at once. force_exit would cancel them mid-await instead, each cancellation
            # printed as a CancelledError traceback.
            server.should_exit = True
            if thread is not None:
                thread.join(timeout=SHUTDOWN_WAIT_S)
            self.stopped.emit()
