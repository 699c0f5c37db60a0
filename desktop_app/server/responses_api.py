"""OpenAI's ``POST /v1/responses`` (openai-agents' default, Codex): its request in, the engine's
request out (the answer, a Response object or its streamed events: responses_answer.py).
Stateless: every request carries its whole conversation (``previous_response_id`` is refused by
name).

``input`` is a string or a list of message items (``role`` + a string or ``input_text`` /
``output_text``, ``input_image`` and ``input_file`` parts: content_parts.py); ``instructions`` is the system message, and a ``system`` or ``developer``
item anywhere joins it (chat_messages.py); earlier ``reasoning`` items are skipped. The fields
accepted, used or ignored: request_fields.py. A thinking model's reasoning is a
``reasoning`` output item before the message, as OpenAI's reasoning models give it.
"""

from __future__ import annotations

from desktop_app.engine.api import DEFAULT_SPEC_MODE, GenerateRequest, Message, SpecMode
from desktop_app.engine.tool_calls import ToolFormat
from desktop_app.server.body_types import RESPONSES
from desktop_app.server.chat_messages import ROLES, fold_system
from desktop_app.server.content_parts import message_of, openai_parts
from desktop_app.server.openai_schema import EFFORTS, BadRequest
from desktop_app.server.request_fields import RESPONSES_IGNORED, accepted, answer_length, sampling, spec_mode
from desktop_app.server.responses_tools import TOOL_ITEMS, add_tool_item, responses_tool_use
from desktop_app.server.structured_output import TEXT, OutputFormat, parse_response_format
from desktop_app.server.tool_use import ToolUse, with_tools

LATER = "is not supported yet by this server (send the whole conversation)"
ACCEPTED = accepted(
    {"model", "input", "instructions", "max_output_tokens", "stream", "reasoning", "text", "speculation"}
    | {"tools", "tool_choice", "parallel_tool_calls"},  # responses_tools.py
    RESPONSES_IGNORED,
    ("top_logprobs", "background"),
    previous_response_id=LATER,
    conversation=LATER,
    prompt=LATER,
)
# Input items that add nothing to the prompt: earlier reasoning, which templates leave out of
# earlier turns anyway (Codex sends its own back, encrypted or not).
SKIPPED_ITEMS = frozenset({"reasoning"})


def _message(role: str, value: object, where: str) -> Message:
    """One message item's content: a string or input_text, input_image and input_file parts (content_parts.py)."""
    if isinstance(value, str):
        return Message(role=role, content=value)
    if isinstance(value, list):
        return message_of(role, openai_parts(value, where, "input"), where, "input")
    raise BadRequest(f"{where} must be a string or a list of content parts", "input")


def text_format(body: object) -> OutputFormat:
    """The answer's format from ``text.format`` (text, json_object or json_schema)."""
    fmt = body.get("text") if isinstance(body, dict) else None
    if fmt is None:
        return TEXT
    if not isinstance(fmt, dict):
        raise BadRequest("'text' must be an object", "text")
    return TEXT if fmt.get("format") is None else parse_response_format(fmt["format"], "text.format")


def parse_responses_request(
    body: object, default_spec: SpecMode = DEFAULT_SPEC_MODE, tool_format: ToolFormat | None = None
) -> tuple[GenerateRequest, bool, ToolUse]:
    """(the engine request, stream?, its tools) or BadRequest naming the field (``tool_format``:
    the loaded model's call syntax)."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    RESPONSES.check(body)  # a list where a string belongs is a 400 naming it, before any parsing
    body = ACCEPTED.check(body)
    grammar = text_format(body).grammar
    messages: list[Message] = []
    if "instructions" in body:
        messages.append(Message(role="system", content=body["instructions"]))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise BadRequest("'input' must be a non-empty string or list of message items", "input")
    for i, item in enumerate(items):
        if isinstance(item, dict) and item.get("type") in TOOL_ITEMS:
            add_tool_item(messages, item, i)
            continue
        if isinstance(item, dict) and item.get("type") in SKIPPED_ITEMS:
            continue
        if not isinstance(item, dict) or item.get("type", "message") != "message":
            kind = item.get("type") if isinstance(item, dict) else type(item).__name__
            raise BadRequest(f"input {i}: only message items are supported, not {kind}", "input")
        given = item.get("role")
        role = ROLES.get(given) if isinstance(given, str) else None
        if role is None:
            raise BadRequest(f"input {i}: the role must be one of {', '.join(ROLES)}", "input")
        messages.append(_message(role, item.get("content"), f"input {i}"))
    think: bool | None = None
    reasoning = body.get("reasoning", {})
    if isinstance(reasoning, dict) and reasoning.get("effort") is not None:
        if reasoning["effort"] not in EFFORTS:
            raise BadRequest(f"'reasoning.effort' must be one of {', '.join(EFFORTS)}", "reasoning")
        think = EFFORTS[reasoning["effort"]]
    try:
        request = GenerateRequest(
            messages=fold_system(messages),  # a system or developer item anywhere joins the instructions
            max_tokens=answer_length(body, ("max_output_tokens",)),
            sampling=sampling(body),
            spec=spec_mode(body, default_spec),
            think=think,
            grammar=grammar,
        )
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    use = responses_tool_use(body, tool_format)
    return with_tools(request, use), bool(body.get("stream", False)), use
