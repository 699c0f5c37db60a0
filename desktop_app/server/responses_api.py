"""OpenAI's ``POST /v1/responses`` (openai-agents' default, Codex): its request in, the engine's
request out; the answer back as a Response object or its streamed events. Stateless: every
request carries its whole conversation (``previous_response_id`` is refused by name).

``input`` is a string or a list of message items (``role`` + a string or ``input_text`` /
``output_text`` parts); ``instructions`` is the system message, and a ``system`` or ``developer``
item anywhere joins it (chat_messages.py); earlier ``reasoning`` items are skipped. The fields
accepted, used or ignored: request_fields.py. A thinking model's reasoning is a
``reasoning`` output item before the message, as OpenAI's reasoning models give it.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

from starlette.requests import Request

from desktop_app.engine.api import DEFAULT_SPEC_MODE, FinishReason, GenerateRequest, Message, SpecMode
from desktop_app.engine.events import Finished
from desktop_app.engine.reasoning import ReasoningFormat, SectionStream, split_reasoning
from desktop_app.engine.stats import GenerationStats
from desktop_app.engine.tool_calls import ToolFormat
from desktop_app.server.backend import Failed, Job
from desktop_app.server.body_types import RESPONSES
from desktop_app.server.chat_messages import ROLES, fold_system
from desktop_app.server.jobs import batched
from desktop_app.server.openai_schema import EFFORTS, BadRequest
from desktop_app.server.request_fields import RESPONSES_IGNORED, accepted, answer_length, sampling, spec_mode
from desktop_app.server.responses_tools import TOOL_ITEMS, add_tool_item, function_call_item, responses_tool_use
from desktop_app.server.structured_output import TEXT, OutputFormat, parse_response_format, truncated
from desktop_app.server.tool_use import AUTO, NO_TOOLS, NONE, REQUIRED, Call, CallStream, ToolUse, with_tools

LATER = "is not supported yet by this server (send the whole conversation)"
ACCEPTED = accepted(
    {"model", "input", "instructions", "max_output_tokens", "stream", "reasoning", "text", "speculation"}
    | {"tools", "tool_choice", "parallel_tool_calls"},  # responses_tools.py
    RESPONSES_IGNORED,
    ("top_logprobs", "background"),
    previous_response_id=LATER,
    conversation=LATER,
    prompt=LATER,
)
# Input items that add nothing to the prompt: earlier reasoning, which templates leave out of
# earlier turns anyway (Codex sends its own back, encrypted or not).
SKIPPED_ITEMS = frozenset({"reasoning"})
PART_TYPES = frozenset({"input_text", "output_text", "text"})


def _content(value: object, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, dict) for p in value):
        if all(p.get("type") in PART_TYPES and isinstance(p.get("text"), str) for p in value):
            return "".join(p["text"] for p in value)
        kinds = sorted({str(p.get("type")) for p in value} - PART_TYPES)
        raise BadRequest(
            f"{where}: only text parts are supported, not {', '.join(kinds) or 'parts without text'}", "input"
        )
    raise BadRequest(f"{where} must be a string or a list of text parts", "input")


def text_format(body: object) -> OutputFormat:
    """The answer's format from ``text.format`` (text, json_object or json_schema)."""
    fmt = body.get("text") if isinstance(body, dict) else None
    if fmt is None:
        return TEXT
    if not isinstance(fmt, dict):
        raise BadRequest("'text' must be an object", "text")
    return TEXT if fmt.get("format") is None else parse_response_format(fmt["format"], "text.format")


def parse_responses_request(
    body: object, default_spec: SpecMode = DEFAULT_SPEC_MODE, tool_format: ToolFormat | None = None
) -> tuple[GenerateRequest, bool, ToolUse]:
    """(the engine request, stream?, its tools) or BadRequest naming the field (``tool_format``:
    the loaded model's call syntax)."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    RESPONSES.check(body)  # a list where a string belongs is a 400 naming it, before any parsing
    body = ACCEPTED.check(body)
    grammar = text_format(body).grammar
    messages: list[Message] = []
    if "instructions" in body:
        messages.append(Message(role="system", content=body["instructions"]))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise BadRequest("'input' must be a non-empty string or list of message items", "input")
    for i, item in enumerate(items):
        if isinstance(item, dict) and item.get("type") in TOOL_ITEMS:
            add_tool_item(messages, item, i)
            continue
        if isinstance(item, dict) and item.get("type") in SKIPPED_ITEMS:
            continue
        if not isinstance(item, dict) or item.get("type", "message") != "message":
            kind = item.get("type") if isinstance(item, dict) else type(item).__name__
            raise BadRequest(f"input {i}: only message items are supported, not {kind}", "input")
        given = item.get("role")
        role = ROLES.get(given) if isinstance(given, str) else None
        if role is None:
            raise BadRequest(f"input {i}: the role must be one of {', '.join(ROLES)}", "input")
        messages.append(Message(role=role, content=_content(item.get("content"), f"input {i}")))
    think: bool | None = None
    reasoning = body.get("reasoning", {})
    if isinstance(reasoning, dict) and reasoning.get("effort") is not None:
        if reasoning["effort"] not in EFFORTS:
            raise BadRequest(f"'reasoning.effort' must be one of {', '.join(EFFORTS)}", "reasoning")
        think = EFFORTS[reasoning["effort"]]
    try:
        request = GenerateRequest(
            messages=fold_system(messages),  # a system or developer item anywhere joins the instructions
            max_tokens=answer_length(body, ("max_output_tokens",)),
            sampling=sampling(body),
            spec=spec_mode(body, default_spec),
            think=think,
            grammar=grammar,
        )
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    use = responses_tool_use(body, tool_format)
    return with_tools(request, use), bool(body.get("stream", False)), use


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
        incomplete = stats is not None and stats.finish_reason in (FinishReason.LENGTH, FinishReason.CONTEXT_FULL)
        return {
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
        content, calls = self.tools.answer(sections.answer)
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
    """response.created, the items' events, then response.completed (or response.failed)."""
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
        text, _ = calls.push(answer, final)
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
            yield build.event("response.completed", response=build.response("completed", items.done, item.stats))
