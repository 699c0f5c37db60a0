"""What a model's chat template says about reasoning ("thinking"): which family's markers its
answers carry, whether it has a Think switch (and which way it defaults), and how earlier
answers are handed back to it.

Read once when a target loads, from the template's own source and renders (and the vocabulary,
for a ``<think>`` model whose template does not name its tags), the way llama.cpp's
``common_chat_templates_support_enable_thinking`` probes a template: render it both ways and
compare.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from desktop_app.engine.errors import TemplateError
from desktop_app.engine.llama.chat_template import ChatTemplate, Message
from desktop_app.engine.reasoning import FORMATS, THINK_TAGS, ReasoningFormat, split_reasoning

# The variables families switch reasoning with, and their values for Think on and off: Qwen3,
# Gemma 4, SmolLM3, GLM and others read ``enable_thinking``; gpt-oss cannot stop reasoning, its
# equivalent is the effort (on: its default, "medium"; off: "low").
SWITCHES: tuple[tuple[str, Any, Any], ...] = (("enable_thinking", True, False), ("reasoning_effort", "medium", "low"))

_PROBE: list[Message] = [Message(role="user", content="Hi")]


@dataclass(frozen=True)
class ThinkSwitch:
    """A template variable that turns reasoning on or off, and the template's own default."""

    variable: str
    on: Any
    off: Any
    default: bool

    def values(self, think: bool | None) -> dict[str, Any]:
        """The template variables for ``think`` (None: the template's default, nothing passed)."""
        return {} if think is None else {self.variable: self.on if think else self.off}


@dataclass(frozen=True)
class TemplateReasoning:
    """A loaded target's reasoning: its format (None: answers are shown as written) and switch."""

    format: ReasoningFormat | None = None
    switch: ThinkSwitch | None = None

    def variables(self, think: bool | None) -> dict[str, Any]:
        return self.switch.values(think) if self.switch is not None else {}

    def messages(self, messages: Sequence[Message]) -> list[Mapping[str, object]]:
        """The conversation as the template takes it: an earlier answer's reasoning goes in
        ``reasoning_content`` and its ``content`` is the answer alone, as llama.cpp's server
        passes them. A template that keeps reasoning (Qwen3 after the last question) reads the
        former; the others never see it."""
        out: list[Mapping[str, object]] = []
        for message in messages:
            if message["role"] == "assistant" and self.format is not None:
                sections = split_reasoning(message["content"], self.format)
                if sections.has_reasoning:
                    out.append({**message, "content": sections.answer, "reasoning_content": sections.reasoning})
                    continue
            out.append(message)
        return out

    def opened(self, prompt: str) -> str:
        """The opening marker (with what follows it) when ``prompt`` ends inside a reasoning
        section the template opened (R1 distills, Qwen3.5 thinking), else ""."""
        fmt = self.format
        if fmt is None or not prompt.rstrip().endswith(fmt.start):
            return ""
        return prompt[prompt.rindex(fmt.start) :]


NO_REASONING = TemplateReasoning()


def _render(template: ChatTemplate, variables: dict[str, Any]) -> str | None:
    try:
        return template.render(_PROBE, add_generation_prompt=True, **variables)
    except TemplateError:
        return None


def find_switch(template: ChatTemplate) -> ThinkSwitch | None:
    """The template's Think switch: a variable it reads whose two values render differently."""
    for variable, on, off in SWITCHES:
        if variable not in template.source:
            continue
        with_on, with_off = _render(template, {variable: on}), _render(template, {variable: off})
        if with_on is not None and with_off is not None and with_on != with_off:
            return ThinkSwitch(variable, on, off, default=_render(template, {}) != with_off)
    return None


def find_format(template: ChatTemplate, is_token: Callable[[str], bool]) -> ReasoningFormat | None:
    """The family whose markers the template writes; ``<think>`` tags also when the vocabulary
    has them as tokens of their own (a template that leaves them to the model)."""
    for fmt in FORMATS:
        if fmt.start in template.source or fmt.end in template.source:
            return fmt
    if is_token(THINK_TAGS.start) and is_token(THINK_TAGS.end):
        return THINK_TAGS
    return None


def detect_reasoning(template: ChatTemplate, is_token: Callable[[str], bool]) -> TemplateReasoning:
    fmt = find_format(template, is_token)
    if fmt is None:
        return NO_REASONING
    return TemplateReasoning(fmt, find_switch(template))
