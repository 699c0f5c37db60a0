"""A streamed chat or text completion: ``chat.completion.chunk`` (or ``text_completion``) events
as the answer grows (a chat's reasoning, text and tool calls apart), then the last chunk with the
finish reason, ``timings`` and any ``warnings`` (and ``usage`` when asked), then ``[DONE]``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from desktop_app.engine.events import Finished
from desktop_app.engine.reasoning import SectionStream
from desktop_app.server.answer_notes import noted
from desktop_app.server.backend import Failed, Job
from desktop_app.server.jobs import batched
from desktop_app.server.openai_schema import chunk, usage
from desktop_app.server.structured_output import TEXT, OutputFormat, truncated
from desktop_app.server.tool_use import CallStream


@dataclass(frozen=True)
class ChatAnswer:
    """A streamed chat answer split as it grows: reasoning from the rest, then calls from text."""

    sections: SectionStream
    calls: CallStream
    output: OutputFormat = TEXT


@dataclass(frozen=True)
class StreamIds:
    """What every chunk of one answer names: chat or text completion, its id and the model."""

    chat: bool
    response_id: str
    model: str


async def completion_events(
    job: Job, request: Request, first: Any, ids: StreamIds, include_usage: bool, answer: ChatAnswer
) -> AsyncIterator[str]:
    chat, response_id, model = ids.chat, ids.response_id, ids.model
    started = False
    async for item in batched(job, request, first):
        if isinstance(item, Failed):
            yield sse({"error": {"message": str(item), "type": "server_error"}})
            return
        final = isinstance(item, Finished)
        if isinstance(item, Finished) and (problem := answer.output.check(item.text, truncated(item.stats))):
            yield sse({"error": {"message": problem, "type": "server_error", "code": "response_format_unmet"}})
            return
        cut = isinstance(item, Finished) and truncated(item.stats)
        reasoning, text = answer.sections.push("" if final else str(item), final=final)  # a held-back marker at the end
        text, calls = answer.calls.push(text, final=final, cut=cut)
        if reasoning or text or calls or not started:
            yield sse(chunk(chat, response_id, model, text, first=not started, reasoning=reasoning, calls=calls))
            started = True
        if isinstance(item, Finished):
            last = noted(chunk(chat, response_id, model, None, item.stats, called=bool(answer.calls.calls)), item.stats)
            if include_usage:
                last["usage"] = usage(item.stats)
            yield sse(last)
            yield "data: [DONE]\n\n"


def sse(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"
