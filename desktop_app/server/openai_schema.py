"""OpenAI request bodies in, engine requests out; engine results in, OpenAI responses out.

Strict like the engine's own types: an unknown field, a wrong type or a value out of range is a
400 with OpenAI's error object, naming the field. Lenient where OpenAI's own clients are: ``null``
for any field means the field is absent (SDKs send ``"logprobs": null``), every field of the SDK's
request types is accepted (used, ignored, or at its neutral value: request_fields.py declares
which, for every endpoint), llama.cpp's sampling fields too, messages as chat_messages.py reads
them (system messages anywhere), and an omitted ``max_tokens`` means "until the model stops or
the context is full". Numbers go through the engine's declared ranges
(``desktop_app.engine.api``), so the message is the same as in the CLI and the window.
``speculation`` is our extra field: off, on or auto for this request.

The fields this parser reads are declared once, as :class:`Field` (a member's wire name is its own
name in lower case); OpenAI's finish reasons ``stop`` and ``length`` are the engine's own words
(:class:`~desktop_app.engine.api.FinishReason`), so the two vocabularies that share a word stay apart.
"""

from __future__ import annotations

import time
import uuid
from enum import auto
from typing import Any

from desktop_app.engine.api import (
    DEFAULT_SPEC_MODE,
    LOGIT_BIAS,
    DrafterKind,
    FinishReason,
    GenerateRequest,
    SpecMode,
    Word,
)
from desktop_app.engine.reasoning import ReasoningFormat, split_reasoning
from desktop_app.engine.stats import GenerationStats
from desktop_app.server.body_types import SHARED
from desktop_app.server.chat_messages import chat_messages
from desktop_app.server.errors import BadRequest
from desktop_app.server.openai_tools import delta_tool_calls, message_tool_calls
from desktop_app.server.request_body import BadNumber, shown
from desktop_app.server.request_fields import (
    CHAT_IGNORED,
    OPENAI_IGNORED,
    accepted,
    answer_length,
    sampling,
    spec_mode,
    stop_strings,
)
from desktop_app.server.tool_use import NO_TOOLS, Call, ToolUse


class Field(Word):
    """A field of an OpenAI request body, by its wire name (the member's name in lower case)."""

    @staticmethod
    def _generate_next_value_(name: str, start: int, count: int, last_values: list[Any]) -> str:
        return name.lower()

    MODEL = auto()
    MESSAGES = auto()  # chat only
    PROMPT = auto()  # completions only
    MAX_TOKENS = auto()
    MAX_COMPLETION_TOKENS = auto()  # chat only: OpenAI's newer name for max_tokens
    N_PREDICT = auto()  # llama-server's name for max_tokens (-1: no limit)
    STOP = auto()  # up to MAX_STOP_STRINGS strings that end the answer
    STREAM = auto()
    STREAM_OPTIONS = auto()
    INCLUDE_USAGE = auto()  # inside stream_options
    SPECULATION = auto()  # ours: off, on or auto
    DRAFTER = auto()  # ours: a DrafterKind value
    SUFFIX = auto()  # completions only: fill in the middle between the prompt and this
    LOGIT_BIAS = auto()  # {"token id": bias}, added to the logits before sampling (engine/sampling.py)
    REASONING_EFFORT = auto()  # chat only: "none"/"minimal" turn a thinking model's Think switch off
    CHAT_TEMPLATE_KWARGS = auto()  # chat only, llama-server's: {"enable_thinking": bool}
    TOOLS = auto()  # chat only: functions the model may call (openai_tools.py)
    TOOL_CHOICE = auto()  # chat only: auto, none, required or {"type": "function", "function": {"name"}}
    PARALLEL_TOOL_CALLS = auto()  # chat only: false: one call at most
    RESPONSE_FORMAT = auto()  # chat only: text, json_object or json_schema (structured_output.py)
    CONTINUE_FINAL_MESSAGE = auto()  # chat only, vLLM's: go on with the last message, an answer (no new turn)


CHAT_ONLY = {
    Field.MESSAGES,
    Field.MAX_COMPLETION_TOKENS,
    Field.REASONING_EFFORT,
    Field.CHAT_TEMPLATE_KWARGS,
    Field.TOOLS,
    Field.TOOL_CHOICE,
    Field.PARALLEL_TOOL_CALLS,
    Field.RESPONSE_FORMAT,
    Field.CONTINUE_FINAL_MESSAGE,
}
_OPENAI_NEUTRAL = ("n", "logprobs", "top_logprobs", "frequency_penalty", "presence_penalty")
# Legacy function calling: its answer has another shape (function_call), so it is refused by name.
_LEGACY = "(the legacy form of function calling) is not supported: send 'tools'"
CHAT = accepted(
    frozenset(Field) - {Field.PROMPT, Field.INCLUDE_USAGE, Field.SUFFIX},
    CHAT_IGNORED,
    _OPENAI_NEUTRAL,
    functions=_LEGACY,
    function_call=_LEGACY,
)
COMPLETIONS = accepted(
    frozenset(Field) - CHAT_ONLY - {Field.INCLUDE_USAGE}, OPENAI_IGNORED, (*_OPENAI_NEUTRAL, "best_of", "echo")
)
CHAT_FIELDS, COMPLETION_FIELDS = CHAT.known, COMPLETIONS.known
EFFORTS = {"none": False, "minimal": False, "low": True, "medium": True, "high": True}


def _field(body: dict[str, Any], name: str, kinds: tuple[type, ...], default: Any = None) -> Any:
    value = body.get(name, default)
    if value is None:
        return default
    if isinstance(value, BadNumber):  # too long or not finite: refused before any arithmetic on it
        raise BadRequest(value.message(name), name)
    if isinstance(value, bool) and bool not in kinds:
        raise BadRequest(f"'{name}' must be {' or '.join(k.__name__ for k in kinds)}, not a boolean", name)
    if not isinstance(value, kinds):
        raise BadRequest(f"'{name}' must be {' or '.join(k.__name__ for k in kinds)}, not {type(value).__name__}", name)
    return value


def parse_request(
    body: object, chat: bool, default_spec: SpecMode = DEFAULT_SPEC_MODE
) -> tuple[GenerateRequest, bool, bool]:
    """(the engine request, stream?, include usage in the stream?) or BadRequest."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    SHARED.check(body)  # the fields every endpoint shares, typed the same everywhere
    body = (CHAT if chat else COMPLETIONS).check(body)
    stop = stop_strings(body, Field.STOP)
    stream = bool(body.get(Field.STREAM, False))
    include_usage = bool(body.get(Field.STREAM_OPTIONS, {}).get(Field.INCLUDE_USAGE, False))
    # Omitted: until the model stops or the context is full (the engine ends there itself).
    lengths = (
        (Field.MAX_COMPLETION_TOKENS, Field.MAX_TOKENS, Field.N_PREDICT)
        if chat
        else (Field.MAX_TOKENS, Field.N_PREDICT)
    )
    common: dict[str, Any] = dict(
        max_tokens=answer_length(body, lengths),
        sampling=sampling(body, logit_bias=_logit_bias(body)),
        stop=stop,
        spec=spec_mode(body, default_spec),
        drafter=_drafter(body),
    )
    try:
        if chat:
            request = GenerateRequest(
                messages=chat_messages(body.get(Field.MESSAGES)),
                think=_think(body),
                continue_answer=bool(_field(body, Field.CONTINUE_FINAL_MESSAGE, (bool,), False)),
                **common,
            )
        else:
            prompt = body.get(Field.PROMPT)
            suffix = _field(body, Field.SUFFIX, (str,))
            if suffix is not None:  # fill in the middle: an empty prefix is a file's start
                if not isinstance(prompt, str):
                    raise BadRequest(f"'{Field.PROMPT}' must be a string", Field.PROMPT)
                return GenerateRequest(prompt=prompt, suffix=suffix, **common), stream, include_usage
            if not isinstance(prompt, str) or not prompt:
                # An empty prompt leaves the engine nothing to continue from (it fails on it).
                raise BadRequest(f"'{Field.PROMPT}' must be a non-empty string", Field.PROMPT)
            request = GenerateRequest(prompt=prompt, **common)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    return request, stream, include_usage


def _drafter(body: dict[str, Any]) -> DrafterKind | None:
    """Our ``drafter`` field: who drafts for this request (None: the best available)."""
    value = body.get(Field.DRAFTER)
    try:
        return DrafterKind(value) if value else None
    except ValueError:
        choices = ", ".join(k.value for k in DrafterKind)
        raise BadRequest(f"drafter must be one of {choices}, not {shown(value)}", Field.DRAFTER) from None


def _logit_bias(body: dict[str, Any]) -> tuple[tuple[int, float], ...]:
    """OpenAI's ``logit_bias``: {"token id": bias} (JSON's keys are text), each bias in
    :data:`~desktop_app.engine.api.LOGIT_BIAS`'s range; the engine checks the ids against the model."""
    out: list[tuple[int, float]] = []
    for key, bias in _field(body, Field.LOGIT_BIAS, (dict,), {}).items():
        if not key.isascii() or not key.isdigit() or len(key) > 12:
            raise BadRequest(
                f"'{Field.LOGIT_BIAS}' keys must be token ids (0 or more), not {shown(key)}", Field.LOGIT_BIAS
            )
        try:
            out.append((int(key), float(LOGIT_BIAS.check(bias))))
        except ValueError as exc:
            raise BadRequest(f"{exc} (token {key})", Field.LOGIT_BIAS) from None
    return tuple(out)


def _think(body: dict[str, Any]) -> bool | None:
    """The Think switch a request asks for (None: the template's default). llama-server's
    ``chat_template_kwargs.enable_thinking`` wins over OpenAI's ``reasoning_effort``."""
    kwargs = _field(body, Field.CHAT_TEMPLATE_KWARGS, (dict,), {})
    if "enable_thinking" in kwargs:
        if not isinstance(kwargs["enable_thinking"], bool):
            raise BadRequest("'chat_template_kwargs.enable_thinking' must be a boolean", Field.CHAT_TEMPLATE_KWARGS)
        return bool(kwargs["enable_thinking"])
    effort = _field(body, Field.REASONING_EFFORT, (str,))
    if effort is not None and effort not in EFFORTS:
        raise BadRequest(f"'{Field.REASONING_EFFORT}' must be one of {', '.join(EFFORTS)}", Field.REASONING_EFFORT)
    return EFFORTS.get(effort) if effort is not None else None


def new_id(chat: bool) -> str:
    return ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:24]


def finish_reason(stats: GenerationStats, called: bool = False) -> str:
    """OpenAI's word for why the answer ended: its ``stop`` and ``length`` are the engine's own words; a
    full context is a length limit too, and anything else (a cancel) reads as a stop. An answer
    that ``called`` tools ended for that, unless a limit cut it (its last call, unfinished, dropped)."""
    if stats.finish_reason in (FinishReason.LENGTH, FinishReason.CONTEXT_FULL):
        return FinishReason.LENGTH.value
    if called:
        return FinishReason.TOOL_CALLS.value
    return FinishReason.STOP.value


def usage(stats: GenerationStats) -> dict[str, int]:
    return {
        "prompt_tokens": stats.prompt_tokens,
        "completion_tokens": stats.generated_tokens,
        "total_tokens": stats.prompt_tokens + stats.generated_tokens,
    }


def timings(stats: GenerationStats) -> dict[str, Any]:
    """llama.cpp's server ``timings`` (prompt and decode speed, drafted/accepted) plus ours."""
    return {
        "prompt_n": stats.prompt_tokens_new,
        "prompt_ms": round(stats.prefill_s * 1000, 3),
        "predicted_n": stats.generated_tokens,
        "predicted_ms": round(stats.decode_s * 1000, 3),
        "predicted_per_second": round(stats.decode_tokens_per_s, 3),
        "draft_n": stats.drafted,
        "draft_n_accepted": stats.accepted,
        "speculation": {
            "mode": stats.mode.value,
            "drafter": stats.drafter.value,
            "drafted": stats.drafted,
            "accepted": stats.accepted,
            "acceptance_rate": round(stats.acceptance_rate, 4),
            "tokens_per_s": round(stats.decode_tokens_per_s, 3),
            "draft_max": stats.draft_max,
            "target_passes": stats.target_passes,
        },
    }


def complete_response(
    chat: bool,
    response_id: str,
    model: str,
    text: str,
    stats: GenerationStats,
    reasoning: ReasoningFormat | None = None,
    tools: ToolUse = NO_TOOLS,
) -> dict[str, Any]:
    """The whole answer; with the model's ``reasoning`` format, a chat answer's reasoning is
    ``reasoning_content`` and ``content`` holds the answer alone (as llama-server gives them); the
    calls of ``tools`` it makes are its ``tool_calls`` (``content`` null when it says nothing else)."""
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish_reason(stats), "logprobs": None}
    if chat:
        sections = split_reasoning(text, reasoning)
        content, calls = tools.answer(sections.answer, cut=finish_reason(stats) == FinishReason.LENGTH.value)
        choice["message"] = {"role": "assistant", "content": content or (None if calls else "")}
        if calls:
            choice["message"]["tool_calls"] = message_tool_calls(calls)
            choice["finish_reason"] = finish_reason(stats, called=True)
        if sections.reasoning:
            choice["message"]["reasoning_content"] = sections.reasoning
    else:
        choice["text"] = text
    return {
        "id": response_id,
        "object": "chat.completion" if chat else "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": usage(stats),
        "timings": timings(stats),
    }


def chunk(
    chat: bool,
    response_id: str,
    model: str,
    text: str | None,
    stats: GenerationStats | None = None,
    first: bool = False,
    reasoning: str = "",
    calls: list[tuple[int, Call, str]] | None = None,
    called: bool = False,
) -> dict[str, Any]:
    """One streamed piece (``reasoning``: new reasoning text of a chat answer; ``calls``: pieces
    of its tool calls); with ``stats`` the last one (finish reason, timings; ``called``: the
    answer made calls)."""
    choice: dict[str, Any] = {
        "index": 0,
        "finish_reason": finish_reason(stats, called) if stats else None,
        "logprobs": None,
    }
    if chat:
        delta: dict[str, Any] = {"role": "assistant"} if first else {}
        if reasoning:
            delta["reasoning_content"] = reasoning
        if text:
            delta["content"] = text
        if calls:
            delta["tool_calls"] = delta_tool_calls(calls)
        choice["delta"] = delta
    else:
        choice["text"] = text or ""
    out: dict[str, Any] = {
        "id": response_id,
        "object": "chat.completion.chunk" if chat else "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
    }
    if stats is not None:
        out["timings"] = timings(stats)
    return out
