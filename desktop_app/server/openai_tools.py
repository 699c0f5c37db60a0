"""OpenAI chat completions' tools: ``tools``, ``tool_choice`` and ``parallel_tool_calls`` in;
``message.tool_calls`` and streamed ``tool_calls`` deltas out (the rules: tool_use.py). Tools of
another type than ``function`` (``custom``) are left out (unserved_tools.py)."""

from __future__ import annotations

from typing import Any

from desktop_app.engine.tool_calls import ToolFormat
from desktop_app.server.errors import BadRequest
from desktop_app.server.tool_use import AUTO, NO_TOOLS, NONE, REQUIRED, Call, ToolUse, function_tool
from desktop_app.server.unserved_tools import leave_out


def chat_tool_use(body: dict[str, Any], fmt: ToolFormat | None) -> ToolUse:
    """The request's tools (``fmt``: the loaded model's call syntax); BadRequest naming the field."""
    tools = body.get("tools")
    choice = body.get("tool_choice", AUTO)
    parallel = body.get("parallel_tool_calls", True)
    if not isinstance(parallel, bool):
        raise BadRequest("'parallel_tool_calls' must be a boolean", "parallel_tool_calls")
    if tools is None or tools == []:
        if choice not in (AUTO, NONE):
            raise BadRequest("'tool_choice' needs 'tools'", "tool_choice")
        return NO_TOOLS
    if not isinstance(tools, list):
        raise BadRequest("'tools' must be a list of {type: function, function: {name, parameters}}", "tools")
    offered = []
    for i, tool in enumerate(tools):
        if isinstance(tool, dict) and isinstance(tool.get("type"), str) and tool["type"] != "function":
            leave_out("/v1/chat/completions", tool["type"], _name(tool))  # a custom tool: no one runs it here
            continue
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(tool.get("function"), dict):
            raise BadRequest(f"tools[{i}] must be {{type: 'function', function: {{name, parameters}}}}", "tools")
        function = tool["function"]
        offered.append(
            function_tool(
                function.get("name"), function.get("description"), function.get("parameters"), f"tools[{i}]", "tools"
            )
        )
    if not offered:
        return chat_tool_use({**body, "tools": None}, fmt)
    if isinstance(choice, dict):
        named = choice.get("function") if choice.get("type") == "function" else None
        if not isinstance(named, dict) or not isinstance(named.get("name"), str):
            raise BadRequest("'tool_choice' must be {type: 'function', function: {name}}", "tool_choice")
        choice = named["name"]
    elif choice not in (AUTO, NONE, REQUIRED):
        raise BadRequest("'tool_choice' must be auto, none, required or a named function", "tool_choice")
    return ToolUse(fmt, tuple(offered), choice, parallel)


def _name(tool: dict[str, Any]) -> object:
    inner = tool.get(tool["type"])
    return inner.get("name") if isinstance(inner, dict) else tool.get("name")


def message_tool_calls(calls: list[Call]) -> list[dict[str, Any]]:
    return [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in calls]


def delta_tool_calls(events: list[tuple[int, Call, str]]) -> list[dict[str, Any]]:
    """Streamed pieces of calls: a call's first has its id, type and name; the rest only arguments."""
    out: list[dict[str, Any]] = []
    for index, call, arguments in events:
        if not arguments:
            out.append(
                {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
            )
        else:
            out.append({"index": index, "function": {"arguments": arguments}})
    return out
