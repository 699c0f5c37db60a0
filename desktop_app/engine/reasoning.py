"""Reasoning ("thinking") sections in a model's text: where they start and end, and how a text
splits into the reasoning and the answer. Llama-free and Qt-free: the window's folded block,
the engine's per-section token counts and the API's ``reasoning_content`` all read this one
parser.

A :class:`ReasoningFormat` names a family's markers (:data:`FORMATS`: ``<think>`` tags,
Gemma 4's thought channel, gpt-oss's analysis and final channels, as their chat templates and
llama.cpp's parsers write them). ``starts_open`` is true for a text that starts inside the
section (a generation prompt that opened it; the engine writes the opening marker at the start
of such an answer, so its own answers always carry both). ``answer_start``: the headers that may
open the answer after the section (gpt-oss's final channel), cut from the answer. While an
answer streams, a partial marker at the end of the text is held back, so "<thi" never flashes
in the answer.
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
    answer_start: tuple[str, ...] = ()

    @property
    def markers(self) -> tuple[str, ...]:
        """Every marker text of the format (the engine shows those that are special tokens)."""
        return (self.start, self.end, *self.answer_start)


# Qwen3/3.5/3.6, DeepSeek-R1 and its distills, SmolLM3, and most others.
THINK_TAGS = ReasoningFormat("think", "<think>", "</think>")
# Gemma 4: "<|channel>thought\n...<channel|>" (its template's strip_thinking).
GEMMA4_CHANNEL = ReasoningFormat("gemma4", "<|channel>thought", "<channel|>")
# gpt-oss (harmony): "<|channel|>analysis<|message|>...<|end|><|start|>assistant<|channel|>final<|message|>...".
GPT_OSS_CHANNELS = ReasoningFormat(
    "gpt-oss",
    "<|channel|>analysis<|message|>",
    "<|end|>",
    answer_start=("<|start|>assistant<|channel|>final<|message|>", "<|channel|>final<|message|>"),
)
FORMATS: tuple[ReasoningFormat, ...] = (GPT_OSS_CHANNELS, GEMMA4_CHANNEL, THINK_TAGS)


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
            answer = _answer(stripped, fmt, streaming)
            return Sections("", text if answer is stripped else answer)
        body = stripped[len(fmt.start) :]
    end = body.find(fmt.end)
    if end < 0:
        cut = _held_back(body, fmt.end) if streaming else 0
        return Sections(body[: len(body) - cut].strip(), "", thinking=True)
    return Sections(body[:end].strip(), _answer(body[end + len(fmt.end) :].lstrip(), fmt, streaming))


def _answer(text: str, fmt: ReasoningFormat, streaming: bool) -> str:
    """The answer after the section, without the header that opens it (``fmt.answer_start``)."""
    for header in fmt.answer_start:
        if text.startswith(header):
            return text[len(header) :].lstrip()
        if streaming and header.startswith(text):
            return ""  # maybe the header, still arriving
    return text


class SectionStream:
    """A streamed text's reasoning and answer as deltas: each :meth:`push` returns what is new of
    each (the API's ``reasoning_content`` and ``content`` deltas). ``final`` releases a partial
    marker held back at the end."""

    def __init__(self, fmt: ReasoningFormat | None) -> None:
        self.fmt = fmt
        self.text = ""
        self._reasoning = 0
        self._answer = 0

    def push(self, piece: str, final: bool = False) -> tuple[str, str]:
        self.text += piece
        sections = split_reasoning(self.text, self.fmt, streaming=not final)
        reasoning, answer = sections.reasoning[self._reasoning :], sections.answer[self._answer :]
        self._reasoning, self._answer = len(sections.reasoning), len(sections.answer)
        return reasoning, answer
