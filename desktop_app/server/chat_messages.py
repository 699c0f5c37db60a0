"""A conversation as the chat template takes it, from any endpoint's messages.

- :func:`chat_messages`: OpenAI's chat ``messages`` (roles, text, image and file parts:
  content_parts.py; an assistant's ``tool_calls``, a tool result's ``tool_call_id``); keys that
  do not change the prompt
  (``refusal``, ``annotations``, ``audio``, ``name``...) are ignored, ``developer`` is ``system``;
- :func:`fold_system`: system messages wherever a client puts them (Claude Code sends one as its
  second message; OpenAI and the Responses API allow them anywhere) joined into the one system
  turn every template has, at the start, after the request's own ``system``/``instructions`` and
  in their order. Many templates refuse a system message after the first turn (Qwen3's, Gemma's),
  and those that take one anywhere read it as the same instruction; so every model gets them the
  same way, and a system message already first changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from desktop_app.engine.api import Message
from desktop_app.server.content_parts import message_of, openai_parts
from desktop_app.server.errors import BadRequest
from desktop_app.server.request_body import shown

# Message roles as the chat template knows them; OpenAI's newer "developer" is the system's.
ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "tool": "tool"}
SYSTEM_JOIN = "\n\n"  # between system texts folded into one turn
_PARAM = "messages"


def fold_system(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with every system message's text joined, in order, into one system message at
    the start (none when there is none)."""
    system = [m["content"] for m in messages if m["role"] == "system"]
    rest = [m for m in messages if m["role"] != "system"]
    if not system:
        return rest
    return [Message(role="system", content=SYSTEM_JOIN.join(system)), *rest]


def chat_messages(value: object) -> list[Message]:
    """OpenAI's chat ``messages``, system messages folded; BadRequest naming what is wrong."""
    if not isinstance(value, list) or not value:
        raise BadRequest(f"'{_PARAM}' must be a non-empty list of {{role, content}} objects", _PARAM)
    out: list[Message] = []
    for i, message in enumerate(value, start=1):
        if not isinstance(message, dict) or "role" not in message:
            raise BadRequest(f"message {i} must be an object with 'role' and 'content'", _PARAM)
        role = ROLES.get(message["role"]) if isinstance(message["role"], str) else None
        if role is None:
            raise BadRequest(
                f"message {i}: the role must be one of {', '.join(ROLES)}, not {shown(message['role'])}", _PARAM
            )
        content = message.get("content")
        if content is None and role == "assistant":
            content = ""  # an assistant turn that carried only tool calls, a refusal or audio
        if isinstance(content, list):  # text, image_url and file parts (content_parts.py)
            parts = openai_parts(content, f"message {i}", _PARAM)
            out.append(_tool_fields(message_of(role, parts, f"message {i}", _PARAM), message, i))
            continue
        if not isinstance(content, str):
            raise BadRequest(f"message {i}: 'content' must be a string or a list of content parts", _PARAM)
        out.append(_tool_fields(Message(role=role, content=content), message, i))
    return fold_system(out)


def _tool_fields(out: Message, message: dict[str, Any], i: int) -> Message:
    """``out`` with an assistant's ``tool_calls`` or a tool result's ``tool_call_id``."""
    calls = message.get("tool_calls")
    if calls and out["role"] == "assistant":
        if not isinstance(calls, list) or not all(
            isinstance(c, dict)
            and isinstance(c.get("function"), dict)
            and isinstance(c["function"].get("name"), str)
            and isinstance(c["function"].get("arguments", ""), str)
            for c in calls
        ):
            raise BadRequest(
                f"message {i}: 'tool_calls' must be a list of {{id, type, function: {{name, arguments}}}}", _PARAM
            )
        out["tool_calls"] = [
            {
                "id": str(c.get("id") or f"call_{i}_{n}"),
                "type": "function",
                "function": {"name": c["function"]["name"], "arguments": c["function"].get("arguments") or "{}"},
            }
            for n, c in enumerate(calls)
        ]
    if out["role"] == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise BadRequest(f"message {i}: a tool message needs the 'tool_call_id' it answers", _PARAM)
        out["tool_call_id"] = call_id
        if isinstance(message.get("name"), str):
            out["name"] = message["name"]
    return out
