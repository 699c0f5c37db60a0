"""Anthropic's tools on /v1/messages: ``tools`` (``name``, ``description``, ``input_schema``) and
``tool_choice`` (auto, any, tool, none; ``disable_parallel_tool_use``) in; ``tool_use`` blocks in
an assistant's content and ``tool_result`` blocks in a user's become the conversation's calls
and results; calls come back as ``tool_use`` blocks, streamed as ``input_json_delta``. Anthropic's
server tools (a ``type`` other than ``custom``) are left out (unserved_tools.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from desktop_app.engine.api import Message, MessageToolCall
from desktop_app.engine.tool_calls import ToolFormat
from desktop_app.server.anthropic_thinking import THINKING_BLOCKS
from desktop_app.server.errors import BadRequest
from desktop_app.server.request_body import body_json
from desktop_app.server.tool_use import AUTO, NO_TOOLS, NONE, REQUIRED, Call, ToolUse, function_tool
from desktop_app.server.unserved_tools import leave_out

CHOICES = {"auto": AUTO, "any": REQUIRED, "none": NONE}
NOT_TEXT = ("tool_use", "tool_result", *THINKING_BLOCKS)  # blocks read apart from a turn's text


def anthropic_tool_use(body: dict[str, Any], fmt: ToolFormat | None) -> ToolUse:
    tools = body.get("tools") or []
    choice = body.get("tool_choice") or {"type": "auto"}
    if not isinstance(tools, list) or not isinstance(choice, dict):
        raise BadRequest("tools: must be a list; tool_choice: an object")
    offered = []
    for i, t in enumerate(tools):
        if isinstance(t, dict) and t.get("type") not in (None, "custom"):  # web_search_20250305, bash_20250124...
            leave_out("/v1/messages", t["type"], t.get("name"))
        elif isinstance(t, dict):
            schema = t.get("input_schema")
            offered.append(function_tool(t.get("name"), t.get("description"), schema, f"tools.{i}", "tools"))
        else:
            raise BadRequest(f"tools.{i}: must be an object with a 'name' and an 'input_schema'")
    kind = choice.get("type")
    if kind == "tool":
        named = choice.get("name")
        if not isinstance(named, str):
            raise BadRequest("tool_choice.name: Field required")
    elif kind in CHOICES:
        named = CHOICES[kind]
    else:
        raise BadRequest("tool_choice.type: must be auto, any, tool or none")
    if not offered:
        return NO_TOOLS
    return ToolUse(fmt, tuple(offered), named, not choice.get("disable_parallel_tool_use", False))


def add_turn(messages: list[Message], content: object, i: int, said: Message) -> None:
    """One turn: what it ``said`` (its text, a user's images), plus an assistant's ``tool_use``
    blocks as its calls or a user's ``tool_result`` blocks as tool messages (before the user's own
    message)."""
    role, text = said["role"], said["content"]
    blocks = content if isinstance(content, list) else []
    calls: list[MessageToolCall] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use" and role == "assistant":
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
                raise BadRequest(f"messages.{i}.content: a tool_use block needs 'id' and 'name'")
            arguments = body_json(block.get("input") or {}, ensure_ascii=False)
            calls.append(
                {"id": block["id"], "type": "function", "function": {"name": block["name"], "arguments": arguments}}
            )
        elif block.get("type") == "tool_result" and role == "user":
            if not isinstance(block.get("tool_use_id"), str):
                raise BadRequest(f"messages.{i}.content: a tool_result block needs 'tool_use_id'")
            result = block.get("content", "")
            if isinstance(result, list):
                result = "".join(str(b.get("text", "")) for b in result if isinstance(b, dict))
            messages.append(Message(role="tool", content=str(result), tool_call_id=block["tool_use_id"]))
    if calls:
        messages.append(Message(role="assistant", content=text, tool_calls=calls))
    elif text or not blocks or role == "assistant":
        messages.append(said)


def plain_blocks(content: object) -> object:
    """The content without its tool and thinking blocks (the text reader's part)."""
    if not isinstance(content, list):
        return content
    return [b for b in content if not (isinstance(b, dict) and b.get("type") in NOT_TEXT)]


def tool_use_block(call: Call) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_" + call.id.removeprefix("call_"), "name": call.name,
            "input": json.loads(call.arguments or "{}")}  # fmt: skip


def tool_use_events(call: Call, index: int, event: Any) -> Iterator[str]:
    """A call's streamed block: its start (input {}), its input as JSON pieces, its stop."""
    block = tool_use_block(call)
    yield event("content_block_start", {"index": index, "content_block": {**block, "input": {}}})
    arguments = call.arguments or "{}"
    for start in range(0, len(arguments), 64):
        delta = {"type": "input_json_delta", "partial_json": arguments[start : start + 64]}
        yield event("content_block_delta", {"index": index, "delta": delta})
    yield event("content_block_stop", {"index": index})
