"""The API's last requests, for the window's API page: a bounded, thread-safe ring fed by an ASGI
middleware around the whole app. Qt-free.

The server runs on its own thread (uvicorn's loop) and the window reads from its GUI thread:
:class:`RequestLog` takes a lock for both, and its ``version`` tells a poller whether anything
changed. A route says which model and which engine job served a request through the request's
state (:func:`note_served`); the middleware reads the job's last event when the response ends
(for a stream, after its last chunk), so the token counts and speed are the answer's own.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from desktop_app.engine.events import Finished

MAX_KEPT = 200  # requests kept; older ones drop off
_MODEL, _JOB = "specchat_model", "specchat_job"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class ApiRequest:
    """One request as the API page lists it (``at``: wall-clock seconds when it arrived)."""

    at: float
    method: str
    endpoint: str
    model: str
    prompt_tokens: int
    answer_tokens: int
    tokens_per_s: float
    status: int
    duration_s: float


class RequestLog:
    """The last ``size`` requests; safe to add from the server's thread and read from another."""

    def __init__(self, size: int = MAX_KEPT) -> None:
        self._entries: deque[ApiRequest] = deque(maxlen=size)
        self._lock = threading.Lock()
        self._version = 0

    @property
    def version(self) -> int:
        """Grows by one with each request added."""
        with self._lock:
            return self._version

    def add(self, entry: ApiRequest) -> None:
        with self._lock:
            self._entries.append(entry)
            self._version += 1

    def recent(self) -> list[ApiRequest]:
        """The kept requests, newest first."""
        with self._lock:
            return list(reversed(self._entries))


def note_served(state: Any, model: str, job: object | None = None) -> None:
    """Say, on a request's ``request.state``, which model (and engine job, whose last event has
    the token counts) served it."""
    setattr(state, _MODEL, model)
    if job is not None:
        setattr(state, _JOB, job)


def _entry(scope: Scope, at: float, status: int, duration_s: float) -> ApiRequest:
    state = scope.get("state") or {}
    last = getattr(state.get(_JOB), "last", None)
    stats = last.stats if isinstance(last, Finished) else None
    return ApiRequest(
        at=at,
        method=str(scope.get("method", "")),
        endpoint=str(scope.get("path", "")),
        model=str(state.get(_MODEL, "")),
        prompt_tokens=stats.prompt_tokens if stats else 0,
        answer_tokens=stats.generated_tokens if stats else 0,
        tokens_per_s=stats.answer_tokens_per_s if stats else 0.0,
        status=status,
        duration_s=duration_s,
    )


class RecordedRequests:
    """ASGI middleware: every HTTP request that reaches ``app`` is added to ``log`` when its
    response ends (or its client leaves: the status it was sent, 499 if none was)."""

    def __init__(self, app: App, log: RequestLog) -> None:
        self.app = app
        self.log = log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope.setdefault("state", {})
        at, start, status = time.time(), time.monotonic(), [0]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except BaseException:
            status[0] = status[0] or 500
            raise
        finally:
            self.log.add(_entry(scope, at, status[0] or 499, time.monotonic() - start))
