"""Tools for a chat template that has none (llama.cpp's generic format, ``common/chat.cpp``'s
``common_chat_params_init_generic`` with minja's polyfills): the functions offered are described
in the system turn (added to the conversation's system message, or made one), with how to call
them: an answer that is JSON, ``{"tool_call": {"name", "arguments"}}`` or ``{"tool_calls": [...]}``
(:data:`~desktop_app.engine.tool_calls.GENERIC` parses it). The template never sees a call nor a
result: an earlier assistant turn's calls become that JSON as its text, and the results that
follow them one user turn of ``{"tool_response": ...}`` objects.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from desktop_app.engine.messages import Tool

HOW_TO_CALL = (
    "To call tools, answer with JSON alone: "
    '{"tool_call": {"name": "<a tool\'s name>", "arguments": {<its arguments>}}}, '
    'or for several calls {"tool_calls": [<calls>]}. Otherwise answer the user directly.'
)


def tools_system_text(tools: Sequence[Tool]) -> str:
    """What the system turn says of ``tools``."""
    listed = json.dumps([dict(t) for t in tools], ensure_ascii=False)
    return f"You can call any of the following tools to satisfy the user's requests: {listed}\n\n{HOW_TO_CALL}"


def generic_messages(messages: Sequence[Mapping[str, object]], tools: Sequence[Tool]) -> list[Mapping[str, object]]:
    """``messages`` as a template without tools can render them, ``tools`` in the system turn. An
    assistant turn keeps its other fields (its ``reasoning_content``)."""
    out: list[Mapping[str, object]] = []
    results = -1  # the index in ``out`` of the user turn gathering the latest results
    for message in messages:
        if message["role"] == "tool":
            result = json.dumps({"tool_response": _result(message)}, ensure_ascii=False)
            if results == len(out) - 1 >= 0:
                out[-1] = {"role": "user", "content": f"{out[-1]['content']}\n{result}"}
            else:
                out.append({"role": "user", "content": result})
                results = len(out) - 1
        elif isinstance(calls := message.get("tool_calls"), list) and calls:
            kept = {k: v for k, v in message.items() if k != "tool_calls"}
            out.append({**kept, "content": _calls_text(calls, str(message["content"] or ""))})
        else:
            out.append(message)
    if tools:
        text = tools_system_text(tools)
        if out and out[0]["role"] == "system":
            out[0] = {**out[0], "content": f"{out[0]['content']}\n\n{text}"}
        else:
            out.insert(0, {"role": "system", "content": text})
    return out


def _result(message: Mapping[str, object]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if "name" in message:
        result["tool"] = message["name"]
    result["content"] = message["content"]
    if "tool_call_id" in message:
        result["tool_call_id"] = message["tool_call_id"]
    return result


def _calls_text(calls: list[Any], content: str) -> str:
    """An assistant turn's calls (``{"id", "function": {"name", "arguments"}}``) as the JSON the
    model is asked to write."""
    written: list[dict[str, Any]] = []
    for call in calls:
        function = call["function"]
        try:
            arguments: Any = json.loads(function["arguments"])
        except (TypeError, ValueError):
            arguments = function["arguments"]
        written.append({"name": function["name"], "arguments": arguments, "id": call.get("id")})
    answer: dict[str, Any] = {"tool_call": written[0]} if len(written) == 1 else {"tool_calls": written}
    if content:
        answer["content"] = content
    return json.dumps(answer, ensure_ascii=False)
