"""What every route of the API shares (create_app builds one :class:`RouteContext` and hands it to
each family of routes): the key check, the first steps of every generating endpoint, how each
family says a failure (OpenAI's error object or Anthropic's), and the shapes of a streamed and a
whole answer."""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from desktop_app.engine.api import FinishReason, GenerateRequest, SpecMode
from desktop_app.engine.events import Finished
from desktop_app.server.answer_notes import dropped_headers, noted, stream_headers
from desktop_app.server.backend import Busy, Counter, Failed, GenerationBackend, Job
from desktop_app.server.errors import CLIENT_GONE, anthropic_error, error
from desktop_app.server.jobs import next_event
from desktop_app.server.keep_alive import anthropic_ping, kept_alive, openai_ping
from desktop_app.server.limits import ServerLimits
from desktop_app.server.openai_schema import BadRequest
from desktop_app.server.request_body import ClientGone, read_json
from desktop_app.server.request_log import note_served

# A generating endpoint's parse step: the request body to the engine's request and whether to stream.
Parse = Callable[[object], tuple[GenerateRequest, bool]]


@dataclass(frozen=True)
class ErrorShape:
    """How one family of endpoints says each failure (OpenAI's error object, or Anthropic's)."""

    unauthorized: Callable[[], Response]
    bad_request: Callable[[BadRequest], Response]
    busy: Callable[[Busy], Response]
    failed: Callable[[Failed], Response]


def client_gone(message: str) -> JSONResponse:
    # Its answer is cancelled: the error's code is the engine's word for that.
    return error(CLIENT_GONE, message, code=FinishReason.CANCELLED.value)


def failed(exc: Failed) -> JSONResponse:
    overflow = "context" in str(exc) and "holds" in str(exc)
    if exc.status is not None:
        return error(exc.status, str(exc), "server_error", code="unavailable")
    if exc.user_error:
        return error(400, str(exc), code="context_length_exceeded" if overflow else None)
    return error(500, str(exc), "server_error")


OPENAI = ErrorShape(
    unauthorized=lambda: error(
        401, "a valid API key is required: send 'Authorization: Bearer <key>'", "authentication_error",
        code="invalid_api_key",
    ),
    bad_request=lambda exc: error(400, str(exc), param=exc.param, code=exc.code),
    busy=lambda exc: error(
        503, str(exc), "server_error", code="busy", headers={"Retry-After": str(exc.retry_after_s)}
    ),
    failed=failed,
)  # fmt: skip
ANTHROPIC = ErrorShape(
    unauthorized=lambda: anthropic_error(
        401, "a valid API key is required: send 'x-api-key: <key>'", "authentication_error"
    ),
    bad_request=lambda exc: anthropic_error(400, str(exc)),
    busy=lambda exc: anthropic_error(529, str(exc), "overloaded_error"),
    failed=lambda exc: anthropic_error(
        400 if exc.user_error else 500, str(exc), "invalid_request_error" if exc.user_error else "api_error"
    ),
)  # fmt: skip


@dataclass
class RouteContext:
    """The server's settings and its engine, as every route sees them."""

    backend: GenerationBackend
    api_key: str | None
    counter: Counter
    default_spec: SpecMode
    limits: ServerLimits

    def authorized(self, request: Request) -> bool:
        if not self.api_key:
            return True
        scheme, _, given = request.headers.get("authorization", "").strip().partition(" ")
        if scheme.lower() != "bearer":
            given = request.headers.get("x-api-key", "")  # Anthropic's clients send the key here
        return hmac.compare_digest(given.strip().encode(), self.api_key.encode())

    def model_id(self) -> str:
        return next((m.id for m in self.backend.served_models()), "specchat")

    async def started(
        self, request: Request, parse: Parse, shape: ErrorShape = OPENAI
    ) -> tuple[GenerateRequest, bool, Job, Any] | Response:
        """Every generating endpoint's first steps: the key, the body, the engine request queued,
        and its first event (a stream starts there, so a prompt the engine refuses is still a
        400, or after ``limits.stream_start_s`` without one: NOTHING_YET) or, for a whole answer,
        its end. (request, stream?, job, event) or the error."""
        if not self.authorized(request):
            return shape.unauthorized()
        try:
            body = await read_json(request, self.limits)
        except ClientGone:
            return client_gone("the client went away during its upload")
        try:
            engine_request, stream = await asyncio.to_thread(parse, body)  # grammars are built off the loop
            job = self.backend.submit(engine_request)
        except BadRequest as exc:
            return shape.bad_request(exc)
        except Busy as exc:
            return shape.busy(exc)
        self.counter.requests += 1
        note_served(request.state, self.model_id(), job)
        while True:
            try:
                event = await next_event(job, request, self.limits.stream_start_s if stream else None)
            except Failed as exc:
                return shape.failed(exc)
            if event is None:
                return client_gone("the client went away")
            if stream or isinstance(event, Finished):
                return engine_request, stream, job, event

    def sse_response(
        self, events: AsyncIterator[str], job: Job, first: object, anthropic: bool = False
    ) -> StreamingResponse:
        """The stream of ``events``: its headers at once, a keep-alive whenever it has nothing to
        send for ``limits.stream_ping_s`` (Anthropic's ``ping``, or an SSE comment)."""
        ping = (lambda: anthropic_ping(job)) if anthropic else (lambda: openai_ping(job))
        return StreamingResponse(
            kept_alive(events, self.limits.stream_ping_s, ping),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", **stream_headers(first)},
        )


def whole(answer: dict[str, Any], finished: Finished) -> JSONResponse:
    """A whole answer, with its timings and warnings (and the count of messages left out as a header)."""
    return JSONResponse(noted(answer, finished.stats), headers=dropped_headers(finished.stats.dropped_turns))
