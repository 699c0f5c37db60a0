"""Anthropic's routes: ``/v1/messages`` (anthropic_api.py, anthropic_stream.py) and
``/v1/messages/count_tokens``; their errors are Anthropic's error objects."""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from desktop_app.engine.api import GenerateRequest
from desktop_app.server.anthropic_api import message_object, new_message_id, parse_messages_request
from desktop_app.server.anthropic_stream import AnswerParts, message_events
from desktop_app.server.backend import Failed
from desktop_app.server.openai_schema import BadRequest
from desktop_app.server.request_body import ClientGone, read_json
from desktop_app.server.route_context import ANTHROPIC, RouteContext, client_gone, whole


class AnthropicRoutes:
    def __init__(self, ctx: RouteContext) -> None:
        self.ctx = ctx

    def routes(self) -> list[Route]:
        return [
            Route("/v1/messages", self.messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", self.count_tokens, methods=["POST"]),
        ]

    async def messages(self, request: Request) -> Response:
        ctx = self.ctx
        answers: list[AnswerParts] = []

        def parse(body: object) -> tuple[GenerateRequest, bool]:
            engine_request, stream, answer = parse_messages_request(
                body, ctx.default_spec, ctx.backend.tool_format(), ctx.backend.reasoning_format()
            )
            answers.append(answer)
            return engine_request, stream

        begun = await ctx.started(request, parse, ANTHROPIC)
        if isinstance(begun, Response):
            return begun
        _, stream, job, event = begun
        message_id, model = new_message_id(), ctx.model_id()
        if stream:
            opening = {"id": message_id, "type": "message", "role": "assistant", "model": model, "content": []}
            return ctx.sse_response(message_events(job, request, event, opening, answers[0]), job, event, True)
        return whole(message_object(message_id, model, event.text, event.stats, answers[0]), event)

    async def count_tokens(self, request: Request) -> Response:
        """Anthropic's count: the prompt's tokens as /v1/messages would render it (usage.input_tokens)."""
        ctx = self.ctx
        if not ctx.authorized(request):
            return ANTHROPIC.unauthorized()
        try:
            body = await read_json(request, ctx.limits)
            engine_request, _, _ = await asyncio.to_thread(  # the tools' grammar is built off the loop
                parse_messages_request,
                body,
                ctx.default_spec,
                ctx.backend.tool_format(),
                ctx.backend.reasoning_format(),
                True,
            )
            size = await asyncio.to_thread(ctx.backend.count_prompt, engine_request)
        except ClientGone:
            return client_gone("the client went away during its upload")
        except BadRequest as exc:
            return ANTHROPIC.bad_request(exc)
        except Failed as exc:
            return ANTHROPIC.failed(exc)
        ctx.counter.requests += 1
        return JSONResponse({"input_tokens": size.tokens})
