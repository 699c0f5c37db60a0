"""Which of an answer's tokens, and which drafts, fall in its reasoning section, as it streams.

The footer counts thinking and answer apart: :class:`ReasoningCount` follows the answer's text
token by token with the target's :class:`ReasoningFormat` and adds the section's share to the
answer's :class:`GenerationStats` (``thinking_tokens``, ``thinking_drafted``,
``thinking_accepted``, ``thinking_s``). Only a section at the start of the answer counts, as in
:func:`~desktop_app.engine.reasoning.split_reasoning`; while the text may still be its start
marker arriving, the tokens and drafts wait to be counted one way or the other.
"""

from __future__ import annotations

import codecs
from enum import Enum

from desktop_app.engine.reasoning import ReasoningFormat
from desktop_app.engine.stats import GenerationStats


class Part(Enum):
    MAYBE = "maybe"  # the text so far may be the start marker arriving
    THINKING = "thinking"
    ANSWER = "answer"  # after the section, or an answer with none


class ReasoningCount:
    """Counts into ``stats``; ``opened`` is the marker the prompt left open (the answer starts
    inside the section) or ""."""

    def __init__(self, fmt: ReasoningFormat | None, opened: str, stats: GenerationStats) -> None:
        self.fmt = fmt
        self.stats = stats
        self.part = Part.ANSWER if fmt is None else Part.THINKING if opened else Part.MAYBE
        self._text = opened
        self._searched = len(opened)  # where the end marker may start, at the earliest
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._waiting = (0, 0, 0)  # tokens, drafted, accepted while MAYBE
        self._first_at: float | None = None

    @property
    def thinking(self) -> bool:
        return self.part is Part.THINKING

    def drafts(self, drafted: int, accepted: int) -> None:
        """A cycle's drafts, made while the section was as it is now (before its tokens)."""
        s = self.stats
        if self.part is Part.THINKING:
            s.thinking_drafted += drafted
            s.thinking_accepted += accepted
        elif self.part is Part.MAYBE:
            tokens, d, a = self._waiting
            self._waiting = (tokens, d + drafted, a + accepted)

    def token(self, data: bytes, now: float) -> None:
        """One more answer token (its bytes), committed at ``now``."""
        if self._first_at is None:
            self._first_at = now
        if self.part is Part.ANSWER or self.fmt is None:
            return
        self._text += self._decoder.decode(data)
        if self.part is Part.MAYBE:
            tokens, drafted, accepted = self._waiting
            self._waiting = (tokens + 1, drafted, accepted)
            self._resolve()
        else:
            self.stats.thinking_tokens += 1
        if self.part is Part.THINKING:
            self._look_for_end(now)

    def _resolve(self) -> None:
        assert self.fmt is not None
        stripped = self._text.lstrip()
        if stripped.startswith(self.fmt.start):
            self.part = Part.THINKING
            self._searched = len(self._text) - len(stripped) + len(self.fmt.start)
            tokens, drafted, accepted = self._waiting
            s = self.stats
            s.thinking_tokens += tokens
            s.thinking_drafted += drafted
            s.thinking_accepted += accepted
        elif stripped and not self.fmt.start.startswith(stripped):
            self.part = Part.ANSWER

    def _look_for_end(self, now: float) -> None:
        assert self.fmt is not None and self._first_at is not None
        end = self.fmt.end
        self.stats.thinking_s = now - self._first_at
        if self._text.find(end, self._searched) >= 0:
            self.part = Part.ANSWER
        else:
            self._searched = max(self._searched, len(self._text) - len(end) + 1)
