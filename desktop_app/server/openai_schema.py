"""OpenAI request bodies in, engine requests out; engine results in, OpenAI responses out.

Strict like the engine's own types: an unknown field, a wrong type or a value out of range is a
400 with OpenAI's error object, naming the field. Numbers go through the engine's declared
ranges (``desktop_app.engine.api``), so the message is the same as in the CLI and the window.
``speculation`` is our extra field: off, on or auto for this request.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from desktop_app.engine.api import DrafterKind, GenerateRequest, GenerationStats, Message, SamplingParams, SpecMode
from desktop_app.server.request_body import BadNumber

CHAT_FIELDS = {"model", "messages", "temperature", "top_p", "max_tokens", "max_completion_tokens", "stop", "seed",
               "n", "stream", "stream_options", "speculation", "drafter", "user", "frequency_penalty",
               "presence_penalty"}
COMPLETION_FIELDS = (CHAT_FIELDS - {"messages", "max_completion_tokens"}) | {"prompt", "echo"}
MAX_STOP_STRINGS = 4


class BadRequest(Exception):
    """Becomes HTTP 400 with ``{"error": {"message", "type": "invalid_request_error", "param"}}``."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None) -> None:
        self.param = param
        self.code = code
        super().__init__(message)


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


def parse_request(body: object, chat: bool, default_spec: SpecMode = SpecMode.AUTO) -> tuple[GenerateRequest, bool, bool]:
    """(the engine request, stream?, include usage in the stream?) or BadRequest."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    allowed = CHAT_FIELDS if chat else COMPLETION_FIELDS
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise BadRequest(f"unknown field '{unknown[0]}' (this server accepts: {', '.join(sorted(allowed))})", unknown[0])
    if _field(body, "n", (int,), 1) != 1:
        raise BadRequest("'n' must be 1: one answer per request", "n")
    for name in ("frequency_penalty", "presence_penalty"):
        if _field(body, name, (int, float), 0) != 0:
            raise BadRequest(f"'{name}' is not supported (only 0)", name)
    if _field(body, "echo", (bool,), False):
        raise BadRequest("'echo' is not supported", "echo")
    _field(body, "model", (str,))
    _field(body, "user", (str,))
    stop = _field(body, "stop", (str, list), [])
    stop = [stop] if isinstance(stop, str) else stop
    if len(stop) > MAX_STOP_STRINGS or not all(isinstance(s, str) and s for s in stop):
        raise BadRequest(f"'stop' must be a string or up to {MAX_STOP_STRINGS} non-empty strings", "stop")
    options = _field(body, "stream_options", (dict,), {})
    include_usage = _field(options, "include_usage", (bool,), False)
    try:
        sampling = SamplingParams(
            temperature=_field(body, "temperature", (int, float), 1.0),
            top_p=_field(body, "top_p", (int, float), 1.0),
            seed=_field(body, "seed", (int,)),
        )
        max_tokens = _field(body, "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens",
                            (int,), 512)
        spec = SpecMode(_field(body, "speculation", (str,), default_spec.value))
        drafter = _field(body, "drafter", (str,))
        common: dict[str, Any] = dict(max_tokens=max_tokens, sampling=sampling, spec=spec, stop=stop,
                                      drafter=DrafterKind(drafter) if drafter else None)
        if chat:
            request = GenerateRequest(messages=_messages(body.get("messages")), **common)
        else:
            prompt = body.get("prompt")
            if not isinstance(prompt, str) or not prompt:
                # An empty prompt leaves the engine nothing to continue from (it fails on it).
                raise BadRequest("'prompt' must be a non-empty string", "prompt")
            request = GenerateRequest(prompt=prompt, **common)
    except ValueError as exc:
        param = str(exc).split(" ", 1)[0].strip("'")
        raise BadRequest(str(exc), param if param in allowed | {"temperature", "top_p"} else None) from None
    return request, bool(_field(body, "stream", (bool,), False)), include_usage


def _messages(value: object) -> list[Message]:
    if not isinstance(value, list) or not value:
        raise BadRequest("'messages' must be a non-empty list of {role, content} objects", "messages")
    out: list[Message] = []
    for i, message in enumerate(value, start=1):
        if not isinstance(message, dict) or set(message) - {"role", "content", "name"}:
            raise BadRequest(f"message {i} must be an object with 'role' and 'content'", "messages")
        content = message.get("content")
        if isinstance(content, list):  # [{"type": "text", "text": ...}, ...]
            if not all(isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str) for p in content):
                raise BadRequest(f"message {i}: only text content parts are supported", "messages")
            content = "".join(p["text"] for p in content)
        role = message.get("role")
        if not isinstance(content, str) or not isinstance(role, str):
            raise BadRequest(f"message {i}: 'role' and 'content' must be strings", "messages")
        out.append(Message(role=role, content=content))
    return out


def new_id(chat: bool) -> str:
    return ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:24]


def finish_reason(stats: GenerationStats) -> str | None:
    return {"stop": "stop", "length": "length", "context_full": "length"}.get(stats.finish_reason or "", "stop")


def usage(stats: GenerationStats) -> dict[str, int]:
    return {"prompt_tokens": stats.prompt_tokens, "completion_tokens": stats.generated_tokens,
            "total_tokens": stats.prompt_tokens + stats.generated_tokens}


def timings(stats: GenerationStats) -> dict[str, Any]:
    """llama.cpp's server ``timings`` (prompt and decode speed, drafted/accepted) plus ours."""
    return {
        "prompt_n": stats.prompt_tokens_new, "prompt_ms": round(stats.prefill_s * 1000, 3),
        "predicted_n": stats.generated_tokens, "predicted_ms": round(stats.decode_s * 1000, 3),
        "predicted_per_second": round(stats.decode_tokens_per_s, 3),
        "draft_n": stats.drafted, "draft_n_accepted": stats.accepted,
        "speculation": {"mode": stats.mode, "drafter": stats.drafter, "drafted": stats.drafted,
                        "accepted": stats.accepted, "acceptance_rate": round(stats.acceptance_rate, 4),
                        "tokens_per_s": round(stats.decode_tokens_per_s, 3), "draft_max": stats.draft_max},
    }


def complete_response(chat: bool, response_id: str, model: str, text: str, stats: GenerationStats) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish_reason(stats), "logprobs": None}
    if chat:
        choice["message"] = {"role": "assistant", "content": text}
    else:
        choice["text"] = text
    return {"id": response_id, "object": "chat.completion" if chat else "text_completion", "created": int(time.time()),
            "model": model, "choices": [choice], "usage": usage(stats), "timings": timings(stats)}


def chunk(chat: bool, response_id: str, model: str, text: str | None, stats: GenerationStats | None = None,
          first: bool = False) -> dict[str, Any]:
    """One streamed piece; with ``stats`` the last one (finish reason, timings)."""
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish_reason(stats) if stats else None, "logprobs": None}
    if chat:
        delta: dict[str, Any] = {"role": "assistant"} if first else {}
        if text:
            delta["content"] = text
        choice["delta"] = delta
    else:
        choice["text"] = text or ""
    out: dict[str, Any] = {"id": response_id, "object": "chat.completion.chunk" if chat else "text_completion",
                           "created": int(time.time()), "model": model, "choices": [choice]}
    if stats is not None:
        out["timings"] = timings(stats)
    return out
