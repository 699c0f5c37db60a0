"""Prompt lookup: copy what followed the latest earlier occurrence of the context's last n tokens.

No model: it pays off when answers repeat their input (rewrites, code edits, quotes). A match
needs 3 tokens at least (2-token matches draft more and worse). While copying, it remembers
where in the context it copies from, so when the answer departs from the source for a token or
two (a corrected typo, a renamed variable) it picks the copy up again as soon as one of the
next source tokens comes back, instead of waiting for 3 new tokens to match.
"""

from __future__ import annotations

import numpy as np

from desktop_app.engine.api import DrafterKind
from desktop_app.engine.drafters import LookupDrafter

RESYNC_WINDOW = 4  # source tokens after the departure where the copy may resume
RESYNC_AFTER = 6  # answer tokens after the departure within which it may


class PromptLookupDrafter(LookupDrafter):
    """Match the context's last ``n`` tokens (longest first, down to ``min_ngram``) earlier in it."""

    kind = DrafterKind.NGRAM

    def __init__(self, max_ngram: int = 4, min_ngram: int = 3) -> None:
        self.max_ngram = max_ngram
        self.min_ngram = min_ngram
        self._anchor: tuple[int, int] | None = None  # (context position, source position) aligned by the last copy

    def lookup(self, context: list[int], k: int) -> list[int]:
        if k <= 0 or len(context) < self.min_ngram + 1:
            return []
        begin = self._match(context)
        if begin is None:
            begin = self._resume(context)
        if begin is None:
            return []
        self._anchor = (len(context), begin)
        return context[begin : begin + k]

    def _match(self, context: list[int]) -> int | None:
        """Where the continuation of the context's last n tokens starts, latest match first."""
        length = len(context)
        ctx = np.asarray(context, dtype=np.int32)
        for n in range(min(self.max_ngram, length - 1), self.min_ngram - 1, -1):
            pattern = ctx[length - n :]
            candidates = length - n  # windows starting before the suffix itself
            match = np.ones(candidates, dtype=bool)
            for j in range(n):
                match &= ctx[j : j + candidates] == pattern[j]
            hits = np.flatnonzero(match)
            if hits.size:
                return int(hits[-1]) + n
        return None

    def _resume(self, context: list[int]) -> int | None:
        """After the answer departed from the source it was copying: the source position
        right after the answer's last token, when that token is one of the next few source tokens."""
        if self._anchor is None:
            return None
        at, source = self._anchor
        length = len(context)
        if not source < at <= length:
            self._anchor = None  # another answer
            return None
        held = 0  # how long the copy went on after the last proposal
        while at + held < length and source + held < at and context[at + held] == context[source + held]:
            held += 1
        departed = at + held
        if departed >= length:
            return None  # no departure (a 3-token match will find the way on)
        if length - departed > RESYNC_AFTER:
            self._anchor = None
            return None
        last = context[-1]
        for j in range(source + held + 1, min(source + held + 1 + RESYNC_WINDOW, at)):
            if context[j] == last:
                return j + 1
        return None
