"""Anthropic's ``POST /v1/messages`` (what Claude Code and the ``anthropic`` SDK call): its request
in, the engine's request out; the answer back as a Message object or its streamed events.

Text, ``system`` (a string or text blocks), ``stop_sequences``, ``max_tokens`` (required, as
Anthropic's own API has it) and streaming; ``temperature``/``top_p``/``top_k`` where a client still
sends them (the 2026 SDK no longer does: the default is temperature 1, Anthropic's). Fields its
clients send that mean nothing for one local model (``cache_control``, ``service_tier``...) are
ignored. Errors have Anthropic's
shape, ``{"type": "error", "error": {"type", "message"}}``. Numbers go through the engine's declared
ranges, as in every other entry point.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from desktop_app.engine.api import DEFAULT_SPEC_MODE, FinishReason, GenerateRequest, Message, SamplingParams, SpecMode
from desktop_app.engine.events import Finished
from desktop_app.engine.stats import GenerationStats
from desktop_app.engine.tool_calls import ToolFormat
from desktop_app.server.anthropic_tools import (
    add_turn,
    anthropic_tool_use,
    plain_blocks,
    tool_use_block,
    tool_use_events,
)
from desktop_app.server.backend import Failed, Job
from desktop_app.server.jobs import batched
from desktop_app.server.openai_schema import MAX_STOP_STRINGS, BadRequest
from desktop_app.server.tool_use import NO_TOOLS, CallStream, ToolUse, with_tools

FIELDS = frozenset(
    {
        "model",
        "messages",
        "system",
        "max_tokens",
        "stop_sequences",
        "stream",
        "temperature",
        "top_p",
        "top_k",
        "metadata",
        "tools",  # anthropic_tools.py
        "tool_choice",
        "speculation",  # ours, as in the OpenAI endpoints: off, on or auto
    }
)
# Sent by Anthropic's clients, meaningless for one local model: accepted and ignored.
IGNORED = frozenset(
    {
        "cache_control",
        "service_tier",
        "container",
        "diagnostics",
        "inference_geo",
        "speed",
        "user_profile_id",
        "workspace_id",
    }
)
LATER = frozenset({"thinking", "output_config"})  # named in the refusal, not "unknown"


def anthropic_error(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
    return JSONResponse({"type": "error", "error": {"type": kind, "message": message}}, status_code=status)


def _text(value: object, where: str) -> str:
    """A string, or a list of text blocks joined; BadRequest for anything else (images, tools)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(b, dict) for b in value):
        kinds = {b.get("type") for b in value}
        if kinds <= {"text"} and all(isinstance(b.get("text"), str) for b in value):
            return "".join(b["text"] for b in value)
        other = sorted(str(k) for k in kinds - {"text"})
        raise BadRequest(f"{where}: only text blocks are supported, not {', '.join(other) or 'blocks without text'}")
    raise BadRequest(f"{where} must be a string or a list of text blocks")


def _number(body: dict[str, Any], name: str, kinds: tuple[type, ...]) -> Any:
    value = body.get(name)
    if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
        raise BadRequest(f"{name}: must be a number")
    return value


def parse_messages_request(
    body: object, default_spec: SpecMode = DEFAULT_SPEC_MODE, tool_format: ToolFormat | None = None
) -> tuple[GenerateRequest, bool, ToolUse]:
    """(the engine request, stream?, its tools) or BadRequest."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    body = {name: value for name, value in body.items() if value is not None and name not in IGNORED}
    for name in sorted(body):
        if name in LATER:
            raise BadRequest(f"{name}: not supported yet by this server")
        if name not in FIELDS:
            raise BadRequest(f"{name}: Extra inputs are not permitted")
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise BadRequest("max_tokens: Field required (an integer)")
    messages: list[Message] = []
    if "system" in body:
        messages.append(Message(role="system", content=_text(body["system"], "system")))
    turns = body.get("messages")
    if not isinstance(turns, list) or not turns:
        raise BadRequest("messages: must be a non-empty list")
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict) or turn.get("role") not in ("user", "assistant"):
            raise BadRequest(f"messages.{i}: must be an object whose role is 'user' or 'assistant'")
        text = _text(plain_blocks(turn.get("content")), f"messages.{i}.content")
        add_turn(messages, turn["role"], turn.get("content"), i, text)
    stop = body.get("stop_sequences", [])
    if not isinstance(stop, list) or len(stop) > MAX_STOP_STRINGS or not all(isinstance(s, str) and s for s in stop):
        raise BadRequest(f"stop_sequences: must be a list of up to {MAX_STOP_STRINGS} non-empty strings")
    if "metadata" in body and not isinstance(body["metadata"], dict):
        raise BadRequest("metadata: must be an object")
    try:
        sampling = SamplingParams(
            temperature=_number(body, "temperature", (int, float)) if "temperature" in body else 1.0,
            top_p=_number(body, "top_p", (int, float)) if "top_p" in body else 1.0,
            top_k=_number(body, "top_k", (int,)) if "top_k" in body else 0,
        )
        request = GenerateRequest(
            messages=messages,
            max_tokens=max_tokens,
            sampling=sampling,
            spec=SpecMode(body.get("speculation", default_spec.value)),
            stop=stop,
        )
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    use = anthropic_tool_use(body, tool_format)
    return with_tools(request, use), bool(body.get("stream", False)), use


def new_message_id() -> str:
    return "msg_" + uuid.uuid4().hex[:24]


def _stop(stats: GenerationStats) -> tuple[str, str | None]:
    """(stop_reason, stop_sequence) in Anthropic's words."""
    if stats.stop_string:
        return "stop_sequence", stats.stop_string
    if stats.finish_reason in (FinishReason.LENGTH, FinishReason.CONTEXT_FULL):
        return "max_tokens", None
    return "end_turn", None


def message_object(
    message_id: str, model: str, text: str, stats: GenerationStats, tools: ToolUse = NO_TOOLS
) -> dict[str, Any]:
    reason, sequence = _stop(stats)
    text, calls = tools.answer(text)
    blocks = [{"type": "text", "text": text}] if text or not calls else []
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [*blocks, *map(tool_use_block, calls)],
        "stop_reason": "tool_use" if calls else reason,
        "stop_sequence": sequence,
        "usage": {"input_tokens": stats.prompt_tokens, "output_tokens": stats.generated_tokens},
    }


def _event(name: str, payload: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps({'type': name, **payload})}\n\n"


async def message_events(
    job: Job, request: Request, first: Any, message_id: str, model: str, tools: ToolUse = NO_TOOLS
) -> AsyncIterator[str]:
    """The streamed events: message_start, one text block's deltas, a tool_use block per call,
    message_delta, message_stop."""
    calls = CallStream(tools)
    opening = {"id": message_id, "type": "message", "role": "assistant", "model": model, "content": []}
    yield _event("message_start", {"message": {**opening, "stop_reason": None, "stop_sequence": None, "usage": {}}})
    yield _event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
    async for item in batched(job, request, first):
        if isinstance(item, Failed):
            yield _event("error", {"error": {"type": "api_error", "message": str(item)}})
        elif isinstance(item, Finished):
            reason, sequence = _stop(item.stats)
            used = {"input_tokens": item.stats.prompt_tokens, "output_tokens": item.stats.generated_tokens}
            text, _ = calls.push("", final=True)
            if text:
                yield _event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": text}})
            yield _event("content_block_stop", {"index": 0})
            for index, call in enumerate(calls.calls, start=1):
                for line in tool_use_events(call, index, _event):
                    yield line
            reason = "tool_use" if calls.calls else reason
            yield _event("message_delta", {"delta": {"stop_reason": reason, "stop_sequence": sequence}, "usage": used})
            yield _event("message_stop", {})
        elif text := calls.push(item)[0]:
            yield _event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": text}})
