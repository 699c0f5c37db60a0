"""Turn chat messages into a prompt with the model's own chat template, rendered sandboxed.

Templates come from downloaded files, so they are untrusted: Jinja's immutable sandbox refuses
access to Python internals, and any failure becomes a TemplateError (nothing else runs).
Models without a template get ChatML.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from desktop_app.engine.api import Message
from desktop_app.engine.errors import TemplateError
from desktop_app.engine.llama.template_limits import (
    RENDER_BUDGET_S,
    LimitedEnvironment,
    RenderTimeout,
    Watchdog,
    join_limited,
)

CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

ROLES = ("system", "user", "assistant", "tool")


def validate_messages(messages: Sequence[object]) -> list[Message]:
    """Check the shape of a message list; raise ValueError saying what is wrong."""
    if not isinstance(messages, (list, tuple)) or not messages:
        raise ValueError("messages must be a non-empty list of {role, content} objects")
    out: list[Message] = []
    for i, message in enumerate(messages, start=1):
        if not isinstance(message, dict):
            raise ValueError(f"message {i} is not an object with role and content")
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            raise ValueError(f"message {i} has role {role!r}; expected one of {', '.join(ROLES)}")
        if not isinstance(content, str):
            raise ValueError(f"message {i} has no text content")
        try:
            content.encode("utf-8")
        except UnicodeEncodeError as exc:
            bad = content[exc.start]
            raise ValueError(
                f"message {i} ({role}) has a character that is not valid text (U+{ord(bad):04X}) at character "
                f"{exc.start + 1} of {len(content)}, after {content[max(0, exc.start - 20) : exc.start]!r}: "
                "remove it and send again"
            ) from None
        out.append(_with_tool_fields(Message(role=role, content=content), message, i))
    return out


def _with_tool_fields(out: Message, message: Mapping[str, object], i: int) -> Message:
    """``out`` with the message's tool calls (an assistant's) or the call it answers (a tool's)."""
    calls = message.get("tool_calls")
    if calls:
        if out["role"] != "assistant" or not isinstance(calls, list):
            raise ValueError(f"message {i}: only an assistant message carries a list of tool calls")
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise ValueError(f"message {i}: a tool call needs a function with a name")
            if not isinstance(function.get("arguments"), str):
                raise ValueError(f"message {i}: a tool call's arguments are a JSON text")
        out["tool_calls"] = calls
    for key in ("tool_call_id", "name"):
        value = message.get(key)
        if isinstance(value, str) and value:
            out[key] = value
    return out


def _raise(message: str) -> None:
    raise TemplateError(f"the chat template refused the conversation: {message}")


def _tojson(value: object, indent: int | None = None, separators: tuple[str, str] | None = None, **_: object) -> str:
    """JSON as models were trained on it (transformers' and llama.cpp's ``tojson``): Jinja's own
    escapes ``<``, ``>``, ``&`` and ``'`` for HTML, which would change tool schemas' text."""
    return json.dumps(value, ensure_ascii=False, indent=indent, separators=separators)


def _environment(strict: bool) -> ImmutableSandboxedEnvironment:
    env = LimitedEnvironment(
        trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined if strict else jinja2.Undefined
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = lambda fmt: datetime.datetime.now().strftime(fmt)
    return env


class ChatTemplate:
    """A model's chat template, rendered in the sandbox under a time and a size budget.
    ``origin`` (the model file's name) is what error messages name."""

    def __init__(
        self,
        source: str | None,
        bos_token: str = "",
        eos_token: str = "",
        origin: str = "the model",
        budget_s: float = RENDER_BUDGET_S,
    ) -> None:
        self.origin = origin
        self.budget_s = budget_s
        self.source = source or CHATML
        self.is_default = source is None
        self.bos_token = bos_token
        self.eos_token = eos_token
        try:
            # strict first (catches template bugs); lenient for optional variables (tools, dates)
            self._templates = [
                _environment(True).from_string(self.source),
                _environment(False).from_string(self.source),
            ]
        except jinja2.TemplateError as exc:
            raise TemplateError(f"the chat template in {origin} is invalid: {exc}") from exc

    def render(
        self, messages: Sequence[Mapping[str, object]], add_generation_prompt: bool = True, **variables: Any
    ) -> str:
        """The prompt for ``messages``; ``variables`` are the template's own (``enable_thinking``...)."""
        values = dict(
            variables,
            messages=list(messages),
            add_generation_prompt=add_generation_prompt,
            bos_token=self.bos_token,
            eos_token=self.eos_token,
        )
        first_error: Exception | None = None
        for template in self._templates:
            try:
                with Watchdog(self.budget_s):
                    return join_limited(template.generate(**values))
            except RenderTimeout:
                raise TemplateError(
                    f"the chat template in {self.origin} did not finish rendering within {self.budget_s:g} s "
                    "(it may loop forever); nothing was sent: load another model file"
                ) from None
            except TemplateError:
                raise
            except SecurityError as exc:
                raise TemplateError(
                    f"the chat template in {self.origin} tried something unsafe and was stopped: {exc}"
                ) from exc
            except jinja2.UndefinedError as exc:
                first_error = first_error or exc
            except Exception as exc:  # a template is untrusted code: report, never crash
                raise TemplateError(f"the chat template in {self.origin} failed: {exc}") from exc
        raise TemplateError(f"the chat template in {self.origin} failed: {first_error}")
