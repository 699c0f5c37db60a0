"""Reasoning ("thinking") sections in a model's text: where they start and end, and how a text
splits into the reasoning and the answer. Llama-free and Qt-free: the window's folded block,
the engine's per-section token counts and the API's ``reasoning_content`` all read this one
parser.

A :class:`ReasoningFormat` names a family's markers. ``starts_open`` is true where the
template's generation prompt already opened the section (the model's text starts inside it).
While an answer streams, a partial start or end marker at the end of the text is held back, so
"<thi" never flashes in the answer.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReasoningFormat:
    """The markers around a family's reasoning section."""

    name: str
    start: str
    end: str
    starts_open: bool = False


THINK_TAGS = ReasoningFormat("think", "<think>", "</think>")


@dataclass(frozen=True)
class Sections:
    """A text split into its reasoning and its answer. ``thinking``: the reasoning section is
    still open (an answer streaming, or one cut off while it reasoned)."""

    reasoning: str
    answer: str
    thinking: bool = False

    @property
    def has_reasoning(self) -> bool:
        return bool(self.reasoning.strip()) or self.thinking


def _held_back(text: str, marker: str) -> int:
    """How many characters at the end of ``text`` are a proper prefix of ``marker``."""
    for n in range(min(len(marker) - 1, len(text)), 0, -1):
        if text.endswith(marker[:n]):
            return n
    return 0


def split_reasoning(text: str, fmt: ReasoningFormat | None = THINK_TAGS, streaming: bool = False) -> Sections:
    """Split ``text`` into reasoning and answer by ``fmt``'s markers (None: all answer).

    The reasoning section is the text between the start marker (or the text's start, for a
    format that starts open) and the end marker; only a section at the start of the text
    (after whitespace) counts, so a model that writes "<think>" in the middle of its answer,
    or a user quoting it, is shown as written. With ``streaming``, a partial marker at the end
    is held back.
    """
    if fmt is None:
        return Sections("", text)
    body = text
    if not fmt.starts_open:
        stripped = text.lstrip()
        if not stripped.startswith(fmt.start):
            if streaming and stripped and fmt.start.startswith(stripped):
                return Sections("", "", thinking=False)  # maybe the start marker, still arriving
            return Sections("", text)
        body = stripped[len(fmt.start) :]
    end = body.find(fmt.end)
    if end < 0:
        cut = _held_back(body, fmt.end) if streaming else 0
        return Sections(body[: len(body) - cut].strip(), "", thinking=True)
    return Sections(body[:end].strip(), body[end + len(fmt.end) :].lstrip())
