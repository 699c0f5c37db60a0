"""The Starlette application: OpenAI's ``/v1/models``, ``/v1/chat/completions``, ``/v1/completions``
``/v1/embeddings`` and ``/v1/responses`` (responses_api.py), Anthropic's ``/v1/messages``
(anthropic_api.py), and ``/health``.

Streamed answers are server-sent events; a client that goes away cancels its generation at
once (the engine stops at its next cycle). With an API key set, every request needs
``Authorization: Bearer KEY`` (or Anthropic's ``x-api-key: KEY``). No request names a file or reaches the history: the models are
the ones the server (or the window) loaded.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from desktop_app.engine.api import DEFAULT_SPEC_MODE, FinishReason, SpecMode
from desktop_app.engine.events import Finished, TextChunk
from desktop_app.engine.reasoning import SectionStream
from desktop_app.server.anthropic_api import (
    anthropic_error,
    message_events,
    message_object,
    new_message_id,
    parse_messages_request,
)
from desktop_app.server.backend import Busy, Counter, Failed, GenerationBackend, Job, ServedModel
from desktop_app.server.embeddings_api import check_dimensions, embedding_response, parse_embedding_request
from desktop_app.server.errors import CLIENT_GONE, EXCEPTION_HANDLERS, error
from desktop_app.server.jobs import FLUSH_S, next_event
from desktop_app.server.limits import DEFAULT_LIMITS, ServerLimits
from desktop_app.server.openai_schema import BadRequest, chunk, complete_response, new_id, parse_request, usage
from desktop_app.server.request_body import ClientGone, read_json
from desktop_app.server.responses_api import ResponseBuilder, parse_responses_request, response_events


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

    def unauthorized() -> JSONResponse:
        return error(
            401,
            "a valid API key is required: send 'Authorization: Bearer <key>'",
            "authentication_error",
            code="invalid_api_key",
        )

    def model_card(model: ServedModel, created: int) -> dict[str, Any]:
        # llama-server and LM Studio name the context length these ways; clients read either.
        return {
            "id": model.id,
            "object": "model",
            "created": created,
            "owned_by": "specchat",
            "context_length": model.context_length,
            "meta": {"n_ctx": model.context_length},
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

    async def generate(request: Request, chat: bool) -> Response:
        if not authorized(request):
            return unauthorized()
        try:
            body = await read_json(request, limits)
        except ClientGone:
            return _client_gone("the client went away during its upload")
        try:
            engine_request, stream, include_usage = parse_request(body, chat, default_spec)
        except BadRequest as exc:
            return error(400, str(exc), param=exc.param, code=exc.code)
        try:
            job = backend.submit(engine_request)
        except Busy as exc:
            return error(503, str(exc), "server_error", code="busy", headers={"Retry-After": str(exc.retry_after_s)})
        counter.requests += 1
        model = next((m.id for m in backend.served_models()), "specchat")
        response_id = new_id(chat)
        # A stream starts at the first event (so a prompt the engine refuses is still a 400);
        # a plain answer waits for the end.
        while True:
            try:
                event = await next_event(job, request)
            except Failed as exc:
                return _failed(exc)
            if event is None:
                return _client_gone("the client went away")
            if stream or isinstance(event, Finished):
                break
        reasoning = backend.reasoning_format() if chat else None
        if stream:
            return StreamingResponse(
                _stream(job, request, event, chat, response_id, model, include_usage, SectionStream(reasoning)),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache"},
            )
        return JSONResponse(complete_response(chat, response_id, model, event.text, event.stats, reasoning))

    async def embeddings(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        try:
            body = await read_json(request, limits)
        except ClientGone:
            return _client_gone("the client went away during its upload")
        try:
            texts, as_base64, dimensions = parse_embedding_request(body)
            result = await asyncio.to_thread(backend.embed, texts)
            check_dimensions(dimensions, len(result.vectors[0]))
        except BadRequest as exc:
            return error(400, str(exc), param=exc.param, code=exc.code)
        except Failed as exc:
            return _failed(exc)
        counter.requests += 1
        model = next((m.id for m in backend.served_models()), "specchat")
        return JSONResponse(embedding_response(result, model, as_base64))

    async def anthropic_messages(request: Request) -> Response:
        if not authorized(request):
            return anthropic_error(401, "a valid API key is required: send 'x-api-key: <key>'", "authentication_error")
        try:
            body = await read_json(request, limits)
        except ClientGone:
            return _client_gone("the client went away during its upload")
        try:
            engine_request, stream = parse_messages_request(body, default_spec)
            job = backend.submit(engine_request)
        except BadRequest as exc:
            return anthropic_error(400, str(exc))
        except Busy as exc:
            return anthropic_error(529, str(exc), "overloaded_error")
        counter.requests += 1
        model = next((m.id for m in backend.served_models()), "specchat")
        message_id = new_message_id()
        while True:
            try:
                event = await next_event(job, request)
            except Failed as exc:
                return anthropic_error(
                    400 if exc.user_error else 500, str(exc), "invalid_request_error" if exc.user_error else "api_error"
                )
            if event is None:
                return _client_gone("the client went away")
            if stream or isinstance(event, Finished):
                break
        if stream:
            return StreamingResponse(
                message_events(job, request, event, message_id, model),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache"},
            )
        return JSONResponse(message_object(message_id, model, event.text, event.stats))

    async def responses(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        try:
            body = await read_json(request, limits)
        except ClientGone:
            return _client_gone("the client went away during its upload")
        try:
            engine_request, stream = parse_responses_request(body, default_spec)
            job = backend.submit(engine_request)
        except BadRequest as exc:
            return error(400, str(exc), param=exc.param, code=exc.code)
        except Busy as exc:
            return error(503, str(exc), "server_error", code="busy", headers={"Retry-After": str(exc.retry_after_s)})
        counter.requests += 1
        build = ResponseBuilder(next((m.id for m in backend.served_models()), "specchat"), engine_request)
        while True:
            try:
                event = await next_event(job, request)
            except Failed as exc:
                return _failed(exc)
            if event is None:
                return _client_gone("the client went away")
            if stream or isinstance(event, Finished):
                break
        reasoning = backend.reasoning_format()
        if stream:
            return StreamingResponse(
                response_events(job, request, event, build, reasoning),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache"},
            )
        return JSONResponse(build.whole(event.text, event.stats, reasoning))

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
            Route("/v1/responses", responses, methods=["POST"]),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
    )
    app.state.counter = counter
    return app


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


async def _stream(
    job: Job,
    request: Request,
    first: Any,
    chat: bool,
    response_id: str,
    model: str,
    include_usage: bool,
    sections: SectionStream,
) -> AsyncIterator[str]:
    # Events already waiting are taken together: consecutive text pieces go out as one SSE
    # chunk (one per token would cost an HTTP chunk and a thread hop each).
    buffer: deque[Any] = deque([first, *job.ready()])
    started = False
    try:
        while True:
            if not buffer:
                try:
                    event = await next_event(job, request)
                except Failed as exc:
                    yield _sse({"error": {"message": str(exc), "type": "server_error"}})
                    return
                buffer.extend([event, *job.ready()] if event is not None else [None])
            event = buffer.popleft()
            if event is None:
                return  # the client went away, or the generation ended without a result
            if isinstance(event, TextChunk):
                text = event.text
                while buffer and isinstance(buffer[0], TextChunk):
                    text += buffer.popleft().text
                reasoning, text = sections.push(text)
                if reasoning or text or not started:
                    yield _sse(chunk(chat, response_id, model, text, first=not started, reasoning=reasoning))
                    started = True
                # Let a few more tokens gather (as the window does): fewer, larger chunks leave
                # the CPU to the engine; a reader sees at most this much extra delay.
                await asyncio.sleep(FLUSH_S)
                buffer.extend(job.ready())
            elif isinstance(event, Finished):
                reasoning, text = sections.push("", final=True)  # a partial marker held back
                if reasoning or text or not started:
                    yield _sse(chunk(chat, response_id, model, text, first=not started, reasoning=reasoning))
                last = chunk(chat, response_id, model, None, event.stats)
                if include_usage:
                    last["usage"] = usage(event.stats)
                yield _sse(last)
                yield "data: [DONE]\n\n"
                return
    finally:
        job.cancel.set()  # the client went away mid-stream (or the stream ended): stop generating


def _sse(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"
