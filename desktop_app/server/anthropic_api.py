"""Anthropic's ``POST /v1/messages`` (what Claude Code and the ``anthropic`` SDK call) and
``POST /v1/messages/count_tokens``: the request in, the engine's request out; the answer back as a
Message object (its streamed events: anthropic_stream.py).

Text, images and documents (``image`` and ``document`` blocks in a user's turn: content_parts.py),
``system`` (a string or text blocks; a ``system`` turn among the messages, as Claude Code
sends one, joins it: chat_messages.py), ``stop_sequences``, ``max_tokens`` (required, as
Anthropic's own API has it; not for counting) and streaming; ``temperature``/``top_p``/``top_k``
where a client still sends them (the 2026 SDK no longer does: the default is temperature 1,
Anthropic's) and llama.cpp's sampling fields; ``thinking`` (anthropic_thinking.py) and tools
(anthropic_tools.py). Fields its clients send that mean nothing for one local model
(``cache_control`` on the request or on any block, ``metadata``, ``context_management``,
``service_tier``...: request_fields.py) are ignored, and so are the ``anthropic-version`` and
``anthropic-beta`` headers. Errors have Anthropic's shape,
``{"type": "error", "error": {"type", "message"}}``. Numbers go through the engine's declared
ranges, as in every other entry point.
"""

from __future__ import annotations

import uuid
from typing import Any

from desktop_app.engine.api import DEFAULT_SPEC_MODE, MAX_TOKENS, GenerateRequest, Message, SpecMode
from desktop_app.engine.reasoning import ReasoningFormat, split_reasoning
from desktop_app.engine.stats import GenerationStats
from desktop_app.engine.tool_calls import ToolFormat
from desktop_app.server.anthropic_stream import AnswerParts, cut, stop_reason, usage
from desktop_app.server.anthropic_thinking import parse_thinking, thinking_block, with_thinking
from desktop_app.server.anthropic_tools import add_turn, anthropic_tool_use, plain_blocks, tool_use_block
from desktop_app.server.body_types import ANTHROPIC_MESSAGES
from desktop_app.server.chat_messages import fold_system
from desktop_app.server.content_parts import anthropic_blocks, message_of
from desktop_app.server.errors import anthropic_error
from desktop_app.server.openai_schema import BadRequest
from desktop_app.server.request_fields import ANTHROPIC_IGNORED, MAX_STOP_STRINGS, accepted, sampling, spec_mode
from desktop_app.server.tool_use import with_tools

__all__ = ["anthropic_error", "message_object", "new_message_id", "parse_messages_request"]

ACCEPTED = accepted(
    {"model", "messages", "system", "max_tokens", "stop_sequences", "stream", "speculation"}
    | {"tools", "tool_choice"}  # anthropic_tools.py
    | {"thinking", "output_config"},  # anthropic_thinking.py
    ANTHROPIC_IGNORED | {"metadata"},
)
ROLES = ("user", "assistant", "system")  # a system turn anywhere joins the system prompt (chat_messages.py)


def _text(value: object, where: str) -> str:
    """A string, or a list of text blocks joined (a system prompt, an assistant's turn); BadRequest
    for anything else (a user's images and documents: content_parts.py)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(b, dict) for b in value):
        kinds = {b.get("type") for b in value}
        if kinds <= {"text"} and all(isinstance(b.get("text"), str) for b in value):
            return "".join(b["text"] for b in value)
        other = sorted(str(k) for k in kinds - {"text"})
        raise BadRequest(f"{where}: only text blocks are supported, not {', '.join(other) or 'blocks without text'}")
    raise BadRequest(f"{where} must be a string or a list of text blocks")


def parse_messages_request(
    body: object,
    default_spec: SpecMode = DEFAULT_SPEC_MODE,
    tool_format: ToolFormat | None = None,
    reasoning: ReasoningFormat | None = None,
    counting: bool = False,
) -> tuple[GenerateRequest, bool, AnswerParts]:
    """(the engine request, stream?, how its answer is cut into blocks) or BadRequest.
    ``reasoning``: the model's markers (thinking blocks in and out); ``counting``: a
    count_tokens request (``max_tokens`` optional, nothing generated)."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    ANTHROPIC_MESSAGES.check(body)  # a list where a string belongs is a 400 naming it, before any parsing
    body = ACCEPTED.check(body)
    max_tokens = body.get("max_tokens", MAX_TOKENS.high if counting else None)
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise BadRequest("max_tokens: Field required (an integer)")
    messages: list[Message] = []
    if "system" in body:
        messages.append(Message(role="system", content=_text(body["system"], "system")))
    turns = body.get("messages")
    if not isinstance(turns, list) or not turns:
        raise BadRequest("messages: must be a non-empty list")
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict) or turn.get("role") not in ROLES:
            raise BadRequest(f"messages.{i}: must be an object whose role is 'user', 'assistant' or 'system'")
        content = turn.get("content")
        if turn["role"] == "system":
            messages.append(Message(role="system", content=_text(plain_blocks(content), f"messages.{i}.content")))
            continue
        where, blocks = f"messages.{i}.content", plain_blocks(content)
        if turn["role"] == "user" and isinstance(blocks, list):  # text, image and document blocks
            said = message_of("user", anthropic_blocks(blocks, where), where)
        else:
            text = _text(blocks, where)
            if turn["role"] == "assistant" and isinstance(content, list):
                text = with_thinking(content, text, reasoning)
            said = Message(role=turn["role"], content=text)
        add_turn(messages, content, i, said)
    stop = body.get("stop_sequences", [])
    if not isinstance(stop, list) or len(stop) > MAX_STOP_STRINGS or not all(isinstance(s, str) and s for s in stop):
        raise BadRequest(f"stop_sequences: must be a list of up to {MAX_STOP_STRINGS} non-empty strings")
    thinking, use = parse_thinking(body), anthropic_tool_use(body, tool_format)
    try:
        request = GenerateRequest(
            messages=fold_system(messages),
            max_tokens=max_tokens,
            sampling=sampling(body),
            spec=spec_mode(body, default_spec),
            stop=stop,
            think=False if use.forced else thinking.think,  # a forced call's grammar leaves no room to reason
        )
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    answer = AnswerParts(reasoning, thinking.shown, use)
    return with_tools(request, use), bool(body.get("stream", False)), answer


def new_message_id() -> str:
    return "msg_" + uuid.uuid4().hex[:24]


def message_object(
    message_id: str, model: str, text: str, stats: GenerationStats, answer: AnswerParts
) -> dict[str, Any]:
    """The whole Message: a thinking block (when the model reasoned), the text, the calls."""
    sections = split_reasoning(text, answer.reasoning)
    text, calls = answer.tools.answer(sections.answer, cut(stats))
    reason, sequence = stop_reason(stats, bool(calls))
    blocks = [thinking_block(sections.reasoning, answer.shown)] if sections.has_reasoning else []
    if text or not (blocks or calls):
        blocks.append({"type": "text", "text": text})
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [*blocks, *map(tool_use_block, calls)],
        "stop_reason": reason,
        "stop_sequence": sequence,
        "usage": usage(stats),
    }
