"""Anthropic's extended thinking on /v1/messages, on the Think switch every endpoint reaches.

In: ``thinking`` ``{"type": "enabled", "budget_tokens": N}`` or ``{"type": "adaptive"}`` (or
``between_tools``) turns a thinking model's switch on, ``{"type": "disabled"}`` off; absent, the
template's default. ``budget_tokens`` is checked (a positive integer) but limits nothing of its
own: ``max_tokens`` bounds the reasoning and the answer together, as on Anthropic's API.
``display: "omitted"`` gives thinking blocks with empty text. A model without a switch answers as
it always does. A forced tool call (``tool_choice`` any or a named tool) turns the switch off: the
call's grammar leaves no room for reasoning (Anthropic's own API refuses the pair).
``output_config.effort`` is accepted and changes nothing; ``output_config.format`` is refused
by name.

History: ``thinking`` and ``redacted_thinking`` blocks of an earlier assistant turn are accepted.
The thinking goes back to the template in the model's own markers, as the window hands back an
earlier answer, so a template that leaves earlier reasoning out (they do, before the last
question) leaves it out of the prompt here too.

Out: the model's reasoning, split from its answer by the window's parser, is a ``thinking`` block
before the text, with a ``signature`` (an opaque constant: the SDKs expect one, and nothing
checks it when it comes back); streamed as a thinking ``content_block_start``, ``thinking_delta``
events and a ``signature_delta`` before the block's stop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from desktop_app.engine.reasoning import ReasoningFormat
from desktop_app.server.errors import BadRequest

SIGNATURE = "specchat-local"  # what a thinking block is signed with: SDKs want the field, nothing verifies it
THINKING_ON = ("enabled", "adaptive", "between_tools")
THINKING_OFF = "disabled"
DISPLAYS = ("summarized", "omitted")
EFFORTS = ("low", "medium", "high", "xhigh", "max")  # output_config.effort: accepted, changes nothing
THINKING_BLOCKS = ("thinking", "redacted_thinking")


@dataclass(frozen=True)
class Thinking:
    """A request's thinking: the Think switch (None: the template's default) and whether the
    reasoning's text is shown in the blocks (``display`` "omitted": empty blocks)."""

    think: bool | None = None
    shown: bool = True


def parse_thinking(body: dict[str, Any]) -> Thinking:
    """The request's ``thinking`` (and a check of ``output_config``); BadRequest naming the field."""
    _check_output_config(body.get("output_config"))
    value = body.get("thinking")
    if value is None:
        return Thinking()
    if not isinstance(value, dict):
        raise BadRequest("thinking: must be an object")
    kind = value.get("type")
    if kind == THINKING_OFF:
        return Thinking(think=False)
    if kind not in THINKING_ON:
        raise BadRequest(f"thinking.type: must be one of {', '.join((*THINKING_ON, THINKING_OFF))}")
    budget = value.get("budget_tokens")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
        raise BadRequest("thinking.budget_tokens: must be a positive integer")
    display = value.get("display")
    if display is not None and display not in DISPLAYS:
        raise BadRequest(f"thinking.display: must be one of {', '.join(DISPLAYS)}")
    return Thinking(think=True, shown=display != "omitted")


def _check_output_config(config: object) -> None:
    if config is None:
        return
    if not isinstance(config, dict):
        raise BadRequest("output_config: must be an object")
    effort = config.get("effort")
    if effort is not None and effort not in EFFORTS:
        raise BadRequest(f"output_config.effort: must be one of {', '.join(EFFORTS)}")
    if config.get("format") is not None:
        raise BadRequest("output_config.format: not supported yet by this server")


def with_thinking(blocks: list[Any], text: str, fmt: ReasoningFormat | None) -> str:
    """An earlier assistant turn's text, its thinking blocks' thinking before it in ``fmt``'s
    markers (the template then keeps or drops it, as for the window's answers); without a
    format, or without thinking, the text alone."""
    thought = "".join(
        b["thinking"] for b in blocks if isinstance(b, dict) and b.get("type") == "thinking" and isinstance(b.get("thinking"), str)
    )  # fmt: skip
    if fmt is None or not thought.strip():
        return text
    return f"{fmt.start}\n{thought.strip()}\n{fmt.end}\n\n{text}"


def thinking_block(reasoning: str, shown: bool) -> dict[str, str]:
    return {"type": "thinking", "thinking": reasoning if shown else "", "signature": SIGNATURE}
