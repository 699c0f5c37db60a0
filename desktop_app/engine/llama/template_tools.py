"""What a model's chat template does with tools: whether it renders the ``tools`` it is given (a
probe, as llama.cpp's template capabilities are probed: render a tool and look for its name), and
which family's call syntax it teaches (:mod:`~desktop_app.engine.tool_calls`). Read once when a
target loads. A template that renders no tools, or teaches a syntax none of those, gets llama.cpp's
generic JSON calls (:mod:`~desktop_app.engine.llama.generic_tools`): every model takes tools.

Conversations reach the template as llama.cpp's server hands them over: an assistant message's
``tool_calls`` in OpenAI's shape with the arguments as an object (templates write them with
``tojson``), a tool result as a ``tool`` message with its ``tool_call_id``.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from desktop_app.engine.api import Message, Tool
from desktop_app.engine.errors import TemplateError
from desktop_app.engine.llama.chat_template import ChatTemplate
from desktop_app.engine.llama.generic_tools import generic_messages
from desktop_app.engine.tool_calls import GENERIC, LLAMA3, ToolFormat, tool_format_named

_PROBE_NAME = "specchat_probe_tool"
_PROBE_TOOL: Tool = {
    "type": "function",
    "function": {
        "name": _PROBE_NAME,
        "description": "A probe",
        "parameters": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
    },
}


@dataclass(frozen=True)
class TemplateTools:
    """A loaded target's tools: the call syntax its answers use (None: no target yet)."""

    format: ToolFormat | None = None

    def messages(self, messages: Sequence[Mapping[str, object]], tools: Sequence[Tool]) -> list[Mapping[str, object]]:
        """The conversation as the template takes it: as it is, or for the generic format with the
        tools in its system turn and the calls and results as text."""
        return generic_messages(messages, tools) if self.format == GENERIC else list(messages)

    def variables(self, tools: Sequence[Tool]) -> dict[str, Any]:
        """The template variables for a request's tools (none: the template's own default)."""
        if not tools or self.format == GENERIC:
            return {}
        values: dict[str, Any] = {"tools": [dict(t) for t in tools]}
        if self.format == LLAMA3:  # llama.cpp's: tools in the system message, today's date
            today = datetime.date.today().strftime("%d %b %Y")
            values.update(date_string=today, tools_in_user_message=False, builtin_tools=None)
        return values


NO_TOOLS = TemplateTools()
GENERIC_TOOLS = TemplateTools(GENERIC)


def detect_tools(template: ChatTemplate) -> TemplateTools:
    if template.is_default or "tools" not in template.source:
        return GENERIC_TOOLS
    probe = [Message(role="user", content="Hi")]
    try:
        rendered = template.render(probe, add_generation_prompt=True, tools=[_PROBE_TOOL])
    except TemplateError:
        return GENERIC_TOOLS
    if _PROBE_NAME not in rendered:
        return GENERIC_TOOLS
    return TemplateTools(tool_format_named(template.source) or GENERIC)


def template_message(message: Mapping[str, object]) -> Mapping[str, object]:
    """A message as templates read it: tool calls' arguments as objects (a text that is not a
    JSON object stays text), and ``function`` kept for templates that read ``tool_call.function``."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return message
    out = []
    for call in calls:
        function = dict(call["function"])
        try:
            arguments = json.loads(function["arguments"])
        except (TypeError, ValueError):
            arguments = function["arguments"]
        function["arguments"] = arguments if isinstance(arguments, dict) else function["arguments"]
        out.append({**call, "function": function, "name": function["name"], "arguments": function["arguments"]})
    return {**message, "tool_calls": out}
