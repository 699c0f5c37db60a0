"""The Starlette application: OpenAI's ``/v1/models``, ``/v1/chat/completions``, ``/v1/completions``
(openai_stream.py) ``/v1/embeddings`` and ``/v1/responses`` (responses_api.py, responses_answer.py),
Anthropic's ``/v1/messages`` and ``/v1/messages/count_tokens`` (anthropic_api.py,
anthropic_stream.py), llama-server's ``/infill`` (infill_api.py), and ``/health``.

Streamed answers are server-sent events, their headers sent as soon as the engine has the prompt
and keep-alives while there is nothing to send (keep_alive.py); a client that goes away cancels
its generation at once (the engine stops at its next cycle). With an API key set, every request needs
``Authorization: Bearer KEY`` (or Anthropic's ``x-api-key: KEY``). No request names a file or reaches the history: the models are
the ones the server (or the window) loaded.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from desktop_app.engine.api import DEFAULT_SPEC_MODE, FinishReason, GenerateRequest, SpecMode
from desktop_app.engine.events import Finished
from desktop_app.engine.reasoning import SectionStream
from desktop_app.server.answer_notes import dropped_headers, noted, stream_headers
from desktop_app.server.anthropic_api import message_object, new_message_id, parse_messages_request
from desktop_app.server.anthropic_stream import AnswerParts, message_events
from desktop_app.server.backend import Busy, Counter, Failed, GenerationBackend, Job, ServedModel
from desktop_app.server.embeddings_api import check_dimensions, embedding_response, parse_embedding_request
from desktop_app.server.errors import CLIENT_GONE, EXCEPTION_HANDLERS, anthropic_error, error
from desktop_app.server.infill_api import infill_events, infill_result, parse_infill_request
from desktop_app.server.jobs import next_event, unless_gone
from desktop_app.server.keep_alive import anthropic_ping, kept_alive, openai_ping
from desktop_app.server.limits import DEFAULT_LIMITS, ServerLimits
from desktop_app.server.openai_schema import BadRequest, Field, complete_response, new_id, parse_request
from desktop_app.server.openai_stream import ChatAnswer, StreamIds, completion_events
from desktop_app.server.openai_tools import chat_tool_use
from desktop_app.server.request_body import ClientGone, read_json
from desktop_app.server.responses_answer import ResponseBuilder, response_events
from desktop_app.server.responses_api import parse_responses_request, text_format
from desktop_app.server.structured_output import TEXT, OutputFormat, parse_response_format, unmet_format
from desktop_app.server.tool_use import NO_TOOLS, CallStream, ToolUse, with_tools


def create_app(
    backend: GenerationBackend,
    api_key: str | None = None,
    counter: Counter | None = None,
    default_spec: SpecMode = DEFAULT_SPEC_MODE,
    limits: ServerLimits = DEFAULT_LIMITS,
) -> Starlette:
    counter = counter or Counter()

    def authorized(request: Request) -> bool:
        if not api_key:
            return True
        scheme, _, given = request.headers.get("authorization", "").strip().partition(" ")
        if scheme.lower() != "bearer":
            given = request.headers.get("x-api-key", "")  # Anthropic's clients send the key here
        return hmac.compare_digest(given.strip().encode(), api_key.encode())

    def unauthorized() -> Response:
        return OPENAI.unauthorized()

    def model_card(model: ServedModel, created: int) -> dict[str, Any]:
        # The context served, as llama-server and LM Studio name it (clients read either), and
        # the one the model was trained for as llama-server names it (when the model says).
        meta = {"n_ctx": model.context_length} | ({"n_ctx_train": model.n_ctx_train} if model.n_ctx_train else {})
        return {
            "id": model.id,
            "object": "model",
            "created": created,
            "owned_by": "specchat",
            "context_length": model.context_length,
            "meta": meta,
        }

    async def models(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        now = int(time.time())
        return JSONResponse({"object": "list", "data": [model_card(m, now) for m in backend.served_models()]})

    async def one_model(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        wanted = request.path_params["model_id"]
        for model in backend.served_models():
            if model.id == wanted:
                return JSONResponse(model_card(model, int(time.time())))
        return error(404, f"the model '{wanted}' is not loaded", param="model", code="model_not_found")

    async def health(request: Request) -> Response:
        # No key needed (as llama-server's): it says only whether a model is loaded.
        if backend.served_models():
            return JSONResponse({"status": "ok"})
        return JSONResponse({"status": "no model loaded"}, status_code=503)

    async def started(
        request: Request, parse: Callable[[object], tuple[GenerateRequest, bool]], shape: ErrorShape = OPENAI
    ) -> tuple[GenerateRequest, bool, Job, Any] | Response:
        """Every generating endpoint's first steps: the key, the body, the engine request queued,
        and its first event (a stream starts there, so a prompt the engine refuses is still a
        400, or after ``limits.stream_start_s`` without one: NOTHING_YET) or, for a whole answer,
        its end. (request, stream?, job, event) or the error."""
        if not authorized(request):
            return shape.unauthorized()
        try:
            body = await read_json(request, limits)
        except ClientGone:
            return _client_gone("the client went away during its upload")
        try:
            engine_request, stream = await asyncio.to_thread(parse, body)  # grammars are built off the loop
            job = backend.submit(engine_request)
        except BadRequest as exc:
            return shape.bad_request(exc)
        except Busy as exc:
            return shape.busy(exc)
        counter.requests += 1
        while True:
            try:
                event = await next_event(job, request, limits.stream_start_s if stream else None)
            except Failed as exc:
                return shape.failed(exc)
            if event is None:
                return _client_gone("the client went away")
            if stream or isinstance(event, Finished):
                return engine_request, stream, job, event

    def model_id() -> str:
        return next((m.id for m in backend.served_models()), "specchat")

    async def generate(request: Request, chat: bool) -> Response:
        usage_asked: list[bool] = []
        tools: list[ToolUse] = []
        output: list[OutputFormat] = [TEXT]

        def parse(body: object) -> tuple[GenerateRequest, bool]:
            engine_request, stream, include_usage = parse_request(body, chat, default_spec)
            usage_asked.append(include_usage)
            if chat:
                assert isinstance(body, dict)  # parse_request refuses any other body
                if body.get(Field.RESPONSE_FORMAT) is not None:
                    output[0] = parse_response_format(body[Field.RESPONSE_FORMAT])
                    engine_request = dataclasses.replace(engine_request, grammar=output[0].grammar)
                tools.append(chat_tool_use(body, backend.tool_format()))
                engine_request = with_tools(engine_request, tools[0])  # a forced call and a format: 400
            return engine_request, stream

        begun = await started(request, parse)
        if isinstance(begun, Response):
            return begun
        _, stream, job, event = begun
        response_id, model = new_id(chat), model_id()
        reasoning = backend.reasoning_format() if chat else None
        use = tools[0] if tools else NO_TOOLS
        if stream:
            answer = ChatAnswer(SectionStream(reasoning), CallStream(use), output[0])
            ids = StreamIds(chat, response_id, model)
            events = completion_events(job, request, event, ids, usage_asked[0], answer)
            return sse_response(events, job, event, limits)
        unmet = unmet_format(output[0], event)
        if unmet is not None:
            return unmet
        return _whole(complete_response(chat, response_id, model, event.text, event.stats, reasoning, use), event)

    async def embeddings(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        try:
            body = await read_json(request, limits)
        except ClientGone:
            return _client_gone("the client went away during its upload")
        try:
            texts, as_base64, dimensions = parse_embedding_request(body)
            result = await unless_gone(lambda cancel: backend.embed(texts, cancel), request)
            if result is None:  # the work stops before its next text
                return _client_gone("the client went away")
            check_dimensions(dimensions, len(result.vectors[0]))
        except BadRequest as exc:
            return error(400, str(exc), param=exc.param, code=exc.code)
        except Busy as exc:  # the window's engine queue is full
            return OPENAI.busy(exc)
        except Failed as exc:
            return _failed(exc)
        counter.requests += 1
        return JSONResponse(embedding_response(result, model_id(), as_base64))

    async def anthropic_messages(request: Request) -> Response:
        answers: list[AnswerParts] = []

        def parse(body: object) -> tuple[GenerateRequest, bool]:
            engine_request, stream, answer = parse_messages_request(
                body, default_spec, backend.tool_format(), backend.reasoning_format()
            )
            answers.append(answer)
            return engine_request, stream

        begun = await started(request, parse, ANTHROPIC)
        if isinstance(begun, Response):
            return begun
        _, stream, job, event = begun
        message_id, model = new_message_id(), model_id()
        if stream:
            opening = {"id": message_id, "type": "message", "role": "assistant", "model": model, "content": []}
            return sse_response(message_events(job, request, event, opening, answers[0]), job, event, limits, True)
        return _whole(message_object(message_id, model, event.text, event.stats, answers[0]), event)

    async def count_tokens(request: Request) -> Response:
        """Anthropic's count: the prompt's tokens as /v1/messages would render it (usage.input_tokens)."""
        if not authorized(request):
            return ANTHROPIC.unauthorized()
        try:
            body = await read_json(request, limits)
            engine_request, _, _ = await asyncio.to_thread(  # the tools' grammar is built off the loop
                parse_messages_request, body, default_spec, backend.tool_format(), backend.reasoning_format(), True
            )
            size = await asyncio.to_thread(backend.count_prompt, engine_request)
        except ClientGone:
            return _client_gone("the client went away during its upload")
        except BadRequest as exc:
            return ANTHROPIC.bad_request(exc)
        except Failed as exc:
            return ANTHROPIC.failed(exc)
        counter.requests += 1
        return JSONResponse({"input_tokens": size.tokens})

    async def responses(request: Request) -> Response:
        tools: list[ToolUse] = []
        output: list[OutputFormat] = [TEXT]

        def parse(body: object) -> tuple[GenerateRequest, bool]:
            engine_request, stream, use = parse_responses_request(body, default_spec, backend.tool_format())
            output[0] = text_format(body)  # after the body's types are checked
            tools.append(use)
            return engine_request, stream

        begun = await started(request, parse)
        if isinstance(begun, Response):
            return begun
        engine_request, stream, job, event = begun
        build, reasoning = ResponseBuilder(model_id(), engine_request, tools[0]), backend.reasoning_format()
        if stream:
            return sse_response(response_events(job, request, event, build, reasoning, output[0]), job, event, limits)
        return unmet_format(output[0], event) or _whole(build.whole(event.text, event.stats, reasoning), event)

    async def infill(request: Request) -> Response:
        begun = await started(request, lambda body: parse_infill_request(body, default_spec))
        if isinstance(begun, Response):
            return begun
        _, stream, job, event = begun
        if stream:
            return sse_response(infill_events(job, request, event), job, event, limits)
        return JSONResponse(infill_result(event.text, event.stats))

    async def chat_completions(request: Request) -> Response:
        return await generate(request, chat=True)

    async def completions(request: Request) -> Response:
        return await generate(request, chat=False)

    app = Starlette(
        routes=[
            Route("/v1/models", models, methods=["GET"]),
            Route("/v1/models/{model_id:path}", one_model, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/completions", completions, methods=["POST"]),
            Route("/v1/embeddings", embeddings, methods=["POST"]),
            Route("/v1/messages", anthropic_messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/infill", infill, methods=["POST"]),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
    )
    app.state.counter = counter
    return app


def sse_response(
    events: AsyncIterator[str], job: Job, first: object, limits: ServerLimits, anthropic: bool = False
) -> StreamingResponse:
    """The stream of ``events``: its headers at once, a keep-alive whenever it has nothing to
    send for ``limits.stream_ping_s`` (Anthropic's ``ping``, or an SSE comment)."""
    ping = (lambda: anthropic_ping(job)) if anthropic else (lambda: openai_ping(job))
    return StreamingResponse(
        kept_alive(events, limits.stream_ping_s, ping),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", **stream_headers(first)},
    )


def _whole(answer: dict[str, Any], finished: Finished) -> JSONResponse:
    """A whole answer, with its timings and warnings (and the count of messages left out as a header)."""
    return JSONResponse(noted(answer, finished.stats), headers=dropped_headers(finished.stats.dropped_turns))


@dataclass(frozen=True)
class ErrorShape:
    """How one family of endpoints says each failure (OpenAI's error object, or Anthropic's)."""

    unauthorized: Callable[[], Response]
    bad_request: Callable[[BadRequest], Response]
    busy: Callable[[Busy], Response]
    failed: Callable[[Failed], Response]


OPENAI = ErrorShape(
    unauthorized=lambda: error(
        401, "a valid API key is required: send 'Authorization: Bearer <key>'", "authentication_error",
        code="invalid_api_key",
    ),
    bad_request=lambda exc: error(400, str(exc), param=exc.param, code=exc.code),
    busy=lambda exc: error(
        503, str(exc), "server_error", code="busy", headers={"Retry-After": str(exc.retry_after_s)}
    ),
    failed=lambda exc: _failed(exc),
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


def _client_gone(message: str) -> JSONResponse:
    # Its answer is cancelled: the error's code is the engine's word for that.
    return error(CLIENT_GONE, message, code=FinishReason.CANCELLED.value)


def _failed(exc: Failed) -> JSONResponse:
    overflow = "context" in str(exc) and "holds" in str(exc)
    if exc.status is not None:
        return error(exc.status, str(exc), "server_error", code="unavailable")
    if exc.user_error:
        return error(400, str(exc), code="context_length_exceeded" if overflow else None)
    return error(500, str(exc), "server_error")
