"""Prompt lookup: copy what followed the latest earlier occurrence of the context's last n tokens.

No model: it pays off when answers repeat their input (rewrites, code edits, quotes). A match
needs 3 tokens at least (2-token matches draft more and worse). While copying, it remembers
where in the context it copies from, so when the answer departs from the source for a token or
two (a corrected typo, a renamed variable) it picks the copy up again as soon as one of the
next source tokens comes back, instead of waiting for 3 new tokens to match.
"""

from __future__ import annotations

from desktop_app.engine.api import DrafterKind
from desktop_app.engine.drafters import CopySource, Hidden, LookupDrafter
from desktop_app.engine.drafters.ngram_counts import ContextFollower

RESYNC_WINDOW = 4  # source tokens after the departure where the copy may resume
RESYNC_AFTER = 6  # answer tokens after the departure within which it may


class PromptLookupDrafter(LookupDrafter):
    """Match the context's last ``n`` tokens (longest first, down to ``min_ngram``) earlier in it."""

    kind = DrafterKind.NGRAM

    def __init__(self, max_ngram: int = 4, min_ngram: int = 3) -> None:
        self.max_ngram = max_ngram
        self.min_ngram = min_ngram
        self._anchor: tuple[int, int] | None = None  # (context position, source position) aligned by the last copy
        # Where each n-gram of the context last occurred with a token after it: the position of
        # that token. Updated as the context grows (a few dictionary writes a token), so a look
        # up costs the same at any context length; scanning the context cost O(length) a cycle.
        self._latest: dict[tuple[int, ...], int] = {}
        self._indexed = ContextFollower()
        self._prompt_length = 0

    def prepare(self, context: list[int], hidden: Hidden | None) -> None:
        self._prompt_length = len(context)

    def lookup(self, context: list[int], k: int) -> list[int]:
        if k <= 0 or len(context) < self.min_ngram + 1:
            return []
        begin = self._match(context)
        if begin is None:
            begin = self._resume(context)
        if begin is None:
            return []
        self._anchor = (len(context), begin)
        self.source = CopySource.PROMPT if begin < self._prompt_length else CopySource.ANSWER
        return context[begin : begin + k]

    def _index(self, context: list[int]) -> None:
        start = self._indexed.new_from(context)
        latest = self._latest
        if start == 0:
            latest.clear()
        orders = range(self.min_ngram, self.max_ngram + 1)
        for position in range(max(start, 1), len(context)):  # the token at ``position`` follows ...
            for n in orders:
                if position >= n:
                    latest[tuple(context[position - n : position])] = position  # ... these n tokens

    def _match(self, context: list[int]) -> int | None:
        """Where the continuation of the context's last n tokens starts, latest match first
        (the suffix itself has no continuation yet, so it is never its own match)."""
        self._index(context)
        length = len(context)
        for n in range(min(self.max_ngram, length - 1), self.min_ngram - 1, -1):
            found = self._latest.get(tuple(context[length - n :]))
            if found is not None:
                return found
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
