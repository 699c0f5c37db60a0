"""The Responses API's answer: the Response object whole, or its streamed events
(``response.created`` and ``response.in_progress`` at once, the output items' events, then
``response.completed``, or ``response.incomplete`` when a limit cut the answer, as OpenAI's
API ends it, or ``response.failed``). The Response carries ours too: ``timings`` and any
``warnings``, as every endpoint's answers do."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

from starlette.requests import Request

from desktop_app.engine.api import GenerateRequest
from desktop_app.engine.events import Finished
from desktop_app.engine.reasoning import ReasoningFormat, SectionStream, split_reasoning
from desktop_app.engine.stats import GenerationStats
from desktop_app.server.answer_notes import noted
from desktop_app.server.backend import Failed, Job
from desktop_app.server.jobs import batched
from desktop_app.server.responses_tools import function_call_item
from desktop_app.server.structured_output import TEXT, OutputFormat, truncated
from desktop_app.server.tool_use import AUTO, NO_TOOLS, NONE, REQUIRED, Call, CallStream, ToolUse


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


class ResponseBuilder:
    """One response's ids and shape, whole or as events."""

    def __init__(self, model: str, request: GenerateRequest, tools: ToolUse = NO_TOOLS) -> None:
        self.id = _new_id("resp")
        self.tools = tools
        self.model = model
        self.created = int(time.time())
        self.request = request
        self.message_id = _new_id("msg")
        self.reasoning_id = _new_id("rs")
        self.sequence = 0

    def response(self, status: str, output: list[dict[str, Any]], stats: GenerationStats | None) -> dict[str, Any]:
        incomplete = stats is not None and truncated(stats)
        response = {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": "incomplete" if incomplete else status,
            "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
            "error": None,
            "model": self.model,
            "output": output,
            "parallel_tool_calls": self.tools.parallel,
            "tool_choice": self.tools.choice
            if self.tools.choice in (AUTO, NONE, REQUIRED)
            else {"type": "function", "name": self.tools.choice},
            "tools": [{"type": "function", **t["function"]} for t in self.tools.tools],
            "temperature": self.request.sampling.temperature,
            "top_p": self.request.sampling.top_p,
            "text": {"format": {"type": "text"}},
            "usage": _usage(stats) if stats is not None else None,
        }
        return noted(response, stats) if stats is not None else response

    def message_item(self, text: str, status: str = "completed") -> dict[str, Any]:
        content = [{"type": "output_text", "text": text, "annotations": []}] if status == "completed" else []
        return {"type": "message", "id": self.message_id, "status": status, "role": "assistant", "content": content}

    def reasoning_item(self, text: str) -> dict[str, Any]:
        return {
            "type": "reasoning",
            "id": self.reasoning_id,
            "summary": [],
            "content": [{"type": "reasoning_text", "text": text}],
        }

    def whole(self, text: str, stats: GenerationStats, fmt: ReasoningFormat | None) -> dict[str, Any]:
        sections = split_reasoning(text, fmt)
        output = [self.reasoning_item(sections.reasoning)] if sections.reasoning else []
        content, calls = self.tools.answer(sections.answer, truncated(stats))
        message = [self.message_item(content)] if content or not calls else []
        return self.response("completed", [*output, *message, *map(function_call_item, calls)], stats)

    def event(self, kind: str, **payload: Any) -> str:
        self.sequence += 1
        return f"event: {kind}\ndata: {json.dumps({'type': kind, 'sequence_number': self.sequence, **payload})}\n\n"


def _usage(stats: GenerationStats) -> dict[str, Any]:
    return {
        "input_tokens": stats.prompt_tokens,
        "input_tokens_details": {"cached_tokens": stats.prompt_tokens - stats.prompt_tokens_new},
        "output_tokens": stats.generated_tokens,
        "output_tokens_details": {"reasoning_tokens": stats.thinking_tokens},
        "total_tokens": stats.prompt_tokens + stats.generated_tokens,
    }


class _Items:
    """The streamed output items: a reasoning item while the model reasons, then the message."""

    def __init__(self, build: ResponseBuilder) -> None:
        self.build = build
        self.open: str | None = None  # "reasoning" or "message"
        self.texts: dict[str, str] = {}
        self.done: list[dict[str, Any]] = []

    def _item(self, kind: str, text: str) -> dict[str, Any]:
        return self.build.reasoning_item(text) if kind == "reasoning" else self.build.message_item(text)

    def add(self, kind: str, delta: str) -> Iterator[str]:
        b = self.build
        if self.open != kind:
            yield from self.close()
            self.open, self.texts[kind] = kind, ""
            start = (
                self.build.message_item("", "in_progress")
                if kind == "message"
                else {**self._item(kind, ""), "content": []}
            )
            yield b.event("response.output_item.added", output_index=len(self.done), item=start)
            part = (
                {"type": "output_text", "text": "", "annotations": []}
                if kind == "message"
                else {"type": "reasoning_text", "text": ""}
            )
            yield b.event(
                "response.content_part.added",
                item_id=start["id"],
                output_index=len(self.done),
                content_index=0,
                part=part,
            )
        self.texts[kind] += delta
        name = "response.output_text.delta" if kind == "message" else "response.reasoning_text.delta"
        item_id = b.message_id if kind == "message" else b.reasoning_id
        yield b.event(name, item_id=item_id, output_index=len(self.done), content_index=0, delta=delta)

    def function_call(self, call: Call) -> Iterator[str]:
        """A whole call's events: the item added, its arguments (one delta), done."""
        b, index = self.build, len(self.done)
        item = function_call_item(call, status="in_progress")
        yield b.event("response.output_item.added", output_index=index, item=item)
        yield b.event(
            "response.function_call_arguments.delta", item_id=item["id"], output_index=index, delta=call.arguments
        )
        yield b.event(
            "response.function_call_arguments.done", item_id=item["id"], output_index=index, arguments=call.arguments
        )
        done = function_call_item(call, item["id"])
        yield b.event("response.output_item.done", output_index=index, item=done)
        self.done.append(done)

    def close(self) -> Iterator[str]:
        if self.open is None:
            return
        b, kind = self.build, self.open
        text, item = self.texts[kind], self._item(kind, self.texts[kind])
        name = "response.output_text.done" if kind == "message" else "response.reasoning_text.done"
        yield b.event(name, item_id=item["id"], output_index=len(self.done), content_index=0, text=text)
        yield b.event(
            "response.content_part.done",
            item_id=item["id"],
            output_index=len(self.done),
            content_index=0,
            part=item["content"][0],
        )
        yield b.event("response.output_item.done", output_index=len(self.done), item=item)
        self.done.append(item)
        self.open = None


async def response_events(
    job: Job,
    request: Request,
    first: Any,
    build: ResponseBuilder,
    fmt: ReasoningFormat | None,
    output: OutputFormat = TEXT,
) -> AsyncIterator[str]:
    """response.created, the items' events, then response.completed (response.incomplete when
    a limit cut the answer; response.failed)."""
    yield build.event("response.created", response=build.response("in_progress", [], None))
    yield build.event("response.in_progress", response=build.response("in_progress", [], None))
    items, sections, calls = _Items(build), SectionStream(fmt), CallStream(build.tools)
    async for item in batched(job, request, first):
        problem = output.check(item.text, truncated(item.stats)) if isinstance(item, Finished) else None
        if isinstance(item, Failed) or problem:
            code = "response_format_unmet" if problem else "server_error"
            failed = {
                **build.response("failed", items.done, None),
                "error": {"code": code, "message": problem or str(item)},
            }
            yield build.event("response.failed", response=failed)
            return
        final = isinstance(item, Finished)
        reasoning, answer = sections.push("" if final else str(item), final)
        text, _ = calls.push(answer, final, isinstance(item, Finished) and truncated(item.stats))
        for kind, delta in (("reasoning", reasoning), ("message", text)):
            for line in items.add(kind, delta) if delta else ():
                yield line
        if isinstance(item, Finished):
            for line in items.add("message", "") if "message" not in items.texts and not calls.calls else ():
                yield line
            for line in items.close():
                yield line
            for call in calls.calls:
                for line in items.function_call(call):
                    yield line
            response = build.response("completed", items.done, item.stats)
            yield build.event(f"response.{response['status']}", response=response)
