"""OpenAI's routes: ``/v1/models``, ``/v1/chat/completions``, ``/v1/completions`` (openai_stream.py),
``/v1/embeddings`` and ``/v1/responses`` (responses_api.py, responses_answer.py)."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from desktop_app.engine.api import GenerateRequest
from desktop_app.engine.reasoning import SectionStream
from desktop_app.server.backend import Busy, Failed, ServedModel
from desktop_app.server.embeddings_api import check_dimensions, embedding_response, parse_embedding_request
from desktop_app.server.errors import error
from desktop_app.server.jobs import unless_gone
from desktop_app.server.openai_schema import BadRequest, Field, complete_response, new_id, parse_request
from desktop_app.server.openai_stream import ChatAnswer, StreamIds, completion_events
from desktop_app.server.openai_tools import chat_tool_use
from desktop_app.server.request_body import ClientGone, read_json
from desktop_app.server.request_log import note_served
from desktop_app.server.responses_answer import ResponseBuilder, response_events
from desktop_app.server.responses_api import parse_responses_request, text_format
from desktop_app.server.route_context import OPENAI, RouteContext, client_gone, failed, whole
from desktop_app.server.structured_output import TEXT, OutputFormat, parse_response_format, unmet_format
from desktop_app.server.tool_use import NO_TOOLS, CallStream, ToolUse, with_tools


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


class OpenAIRoutes:
    def __init__(self, ctx: RouteContext) -> None:
        self.ctx = ctx

    def routes(self) -> list[Route]:
        return [
            Route("/v1/models", self.models, methods=["GET"]),
            Route("/v1/models/{model_id:path}", self.one_model, methods=["GET"]),
            Route("/v1/chat/completions", self.chat_completions, methods=["POST"]),
            Route("/v1/completions", self.completions, methods=["POST"]),
            Route("/v1/embeddings", self.embeddings, methods=["POST"]),
            Route("/v1/responses", self.responses, methods=["POST"]),
        ]

    async def models(self, request: Request) -> Response:
        if not self.ctx.authorized(request):
            return OPENAI.unauthorized()
        now = int(time.time())
        return JSONResponse({"object": "list", "data": [model_card(m, now) for m in self.ctx.backend.served_models()]})

    async def one_model(self, request: Request) -> Response:
        if not self.ctx.authorized(request):
            return OPENAI.unauthorized()
        wanted = request.path_params["model_id"]
        for model in self.ctx.backend.served_models():
            if model.id == wanted:
                return JSONResponse(model_card(model, int(time.time())))
        return error(404, f"the model '{wanted}' is not loaded", param="model", code="model_not_found")

    async def chat_completions(self, request: Request) -> Response:
        return await self._generate(request, chat=True)

    async def completions(self, request: Request) -> Response:
        return await self._generate(request, chat=False)

    async def _generate(self, request: Request, chat: bool) -> Response:
        ctx = self.ctx
        usage_asked: list[bool] = []
        tools: list[ToolUse] = []
        output: list[OutputFormat] = [TEXT]

        def parse(body: object) -> tuple[GenerateRequest, bool]:
            engine_request, stream, include_usage = parse_request(body, chat, ctx.default_spec)
            usage_asked.append(include_usage)
            if chat:
                assert isinstance(body, dict)  # parse_request refuses any other body
                if body.get(Field.RESPONSE_FORMAT) is not None:
                    output[0] = parse_response_format(body[Field.RESPONSE_FORMAT])
                    engine_request = dataclasses.replace(engine_request, grammar=output[0].grammar)
                tools.append(chat_tool_use(body, ctx.backend.tool_format()))
                engine_request = with_tools(engine_request, tools[0])  # a forced call and a format: 400
            return engine_request, stream

        begun = await ctx.started(request, parse)
        if isinstance(begun, Response):
            return begun
        _, stream, job, event = begun
        response_id, model = new_id(chat), ctx.model_id()
        reasoning = ctx.backend.reasoning_format() if chat else None
        use = tools[0] if tools else NO_TOOLS
        if stream:
            answer = ChatAnswer(SectionStream(reasoning), CallStream(use), output[0])
            ids = StreamIds(chat, response_id, model)
            events = completion_events(job, request, event, ids, usage_asked[0], answer)
            return ctx.sse_response(events, job, event)
        unmet = unmet_format(output[0], event)
        if unmet is not None:
            return unmet
        return whole(complete_response(chat, response_id, model, event.text, event.stats, reasoning, use), event)

    async def embeddings(self, request: Request) -> Response:
        ctx = self.ctx
        if not ctx.authorized(request):
            return OPENAI.unauthorized()
        try:
            body = await read_json(request, ctx.limits)
        except ClientGone:
            return client_gone("the client went away during its upload")
        try:
            texts, as_base64, dimensions = parse_embedding_request(body)
            result = await unless_gone(lambda cancel: ctx.backend.embed(texts, cancel), request)
            if result is None:  # the work stops before its next text
                return client_gone("the client went away")
            check_dimensions(dimensions, len(result.vectors[0]))
        except BadRequest as exc:
            return error(400, str(exc), param=exc.param, code=exc.code)
        except Busy as exc:  # the window's engine queue is full
            return OPENAI.busy(exc)
        except Failed as exc:
            return failed(exc)
        ctx.counter.requests += 1
        note_served(request.state, ctx.model_id())
        return JSONResponse(embedding_response(result, ctx.model_id(), as_base64))

    async def responses(self, request: Request) -> Response:
        ctx = self.ctx
        tools: list[ToolUse] = []
        output: list[OutputFormat] = [TEXT]

        def parse(body: object) -> tuple[GenerateRequest, bool]:
            engine_request, stream, use = parse_responses_request(body, ctx.default_spec, ctx.backend.tool_format())
            output[0] = text_format(body)  # after the body's types are checked
            tools.append(use)
            return engine_request, stream

        begun = await ctx.started(request, parse)
        if isinstance(begun, Response):
            return begun
        engine_request, stream, job, event = begun
        build, reasoning = ResponseBuilder(ctx.model_id(), engine_request, tools[0]), ctx.backend.reasoning_format()
        if stream:
            return ctx.sse_response(response_events(job, request, event, build, reasoning, output[0]), job, event)
        return unmet_format(output[0], event) or whole(build.whole(event.text, event.stats, reasoning), event)
