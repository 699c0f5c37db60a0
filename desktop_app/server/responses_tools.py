"""The Responses API's function tools (what openai-agents and Codex send): ``tools`` as
``{type: "function", name, description, parameters}``, ``tool_choice``, ``parallel_tool_calls``;
``function_call`` and ``function_call_output`` input items become the conversation's tool calls
and results; calls come back as ``function_call`` output items (the rules: tool_use.py). Tools of
other types (``web_search``, ``namespace``, ``mcp``, ``custom``...) are left out (unserved_tools.py)."""

from __future__ import annotations

import uuid
from typing import Any

from desktop_app.engine.api import Message, MessageToolCall
from desktop_app.engine.tool_calls import ToolFormat
from desktop_app.server.errors import BadRequest
from desktop_app.server.request_body import body_json
from desktop_app.server.tool_use import AUTO, NO_TOOLS, NONE, REQUIRED, Call, ToolUse, function_tool
from desktop_app.server.unserved_tools import leave_out

TOOL_ITEMS = frozenset({"function_call", "function_call_output"})


def responses_tool_use(body: dict[str, Any], fmt: ToolFormat | None) -> ToolUse:
    tools = body.get("tools") or []
    choice = body.get("tool_choice", AUTO)
    parallel = body.get("parallel_tool_calls", True)
    if not isinstance(tools, list) or not isinstance(parallel, bool):
        raise BadRequest("'tools' must be a list of function tools; 'parallel_tool_calls' a boolean", "tools")
    offered = []
    for i, tool in enumerate(tools):
        if isinstance(tool, dict) and isinstance(tool.get("type"), str) and tool["type"] != "function":
            # web_search, namespace, mcp, custom...: the provider's to run, or not plain functions
            leave_out("/v1/responses", tool["type"], tool.get("name", tool.get("server_label")))
            continue
        if not isinstance(tool, dict) or tool.get("type") != "function":
            kind = tool.get("type") if isinstance(tool, dict) else type(tool).__name__
            raise BadRequest(f"tools[{i}]: only function tools are supported, not {kind}", "tools")
        offered.append(
            function_tool(tool.get("name"), tool.get("description"), tool.get("parameters"), f"tools[{i}]", "tools")
        )
    if isinstance(choice, dict):
        if choice.get("type") != "function" or not isinstance(choice.get("name"), str):
            raise BadRequest("'tool_choice' must be auto, none, required or {type: 'function', name}", "tool_choice")
        choice = choice["name"]
    elif choice not in (AUTO, NONE, REQUIRED):
        raise BadRequest("'tool_choice' must be auto, none, required or {type: 'function', name}", "tool_choice")
    if not offered:
        return NO_TOOLS if choice in (AUTO, NONE) else ToolUse(fmt, (), choice, parallel)
    return ToolUse(fmt, tuple(offered), choice, parallel)


def add_tool_item(messages: list[Message], item: dict[str, Any], i: int) -> None:
    """A ``function_call`` joins the assistant turn before it (or opens one); a
    ``function_call_output`` is a ``tool`` message answering its call."""
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        raise BadRequest(f"input {i}: a {item['type']} item needs its 'call_id'", "input")
    if item["type"] == "function_call":
        name, arguments = item.get("name"), item.get("arguments", "{}")
        if not isinstance(name, str) or not isinstance(arguments, str):
            raise BadRequest(f"input {i}: a function_call needs a 'name' and 'arguments' (a JSON text)", "input")
        call: MessageToolCall = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        last = messages[-1] if messages else None
        if last is not None and last["role"] == "assistant":
            last.setdefault("tool_calls", []).append(call)
        else:
            messages.append(Message(role="assistant", content="", tool_calls=[call]))
        return
    output = item.get("output")
    if isinstance(output, list):  # [{type: input_text, text}...]
        output = "".join(str(p.get("text", "")) for p in output if isinstance(p, dict))
    if not isinstance(output, str):
        output = body_json(output, ensure_ascii=False)
    messages.append(Message(role="tool", content=output, tool_call_id=call_id))


def function_call_item(call: Call, item_id: str | None = None, status: str = "completed") -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": item_id or "fc_" + uuid.uuid4().hex[:24],
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments if status == "completed" else "",
        "status": status,
    }
