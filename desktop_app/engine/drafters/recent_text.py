"""The text of this process's earlier requests and answers, for copying it again at once.

An agent that resends its context, a regenerate, a file emitted again: the answer repeats text
an earlier request held or an earlier answer said, which the context of this one may not hold.
llama.cpp's ``ngram-mod`` keeps a pool across requests (a hash of the last 24 tokens -> the
token after them) and drafts up to 64 tokens from it. This is the same idea kept as text: the
tokens learned (each prompt's new part and each answer, :meth:`learn`) and where each window of
:data:`KEY` tokens last occurred. A proposal is the text that followed the context's last
``KEY`` tokens there, and it says how long the context already agrees with that text (``held``,
up to the longest copy a pass drafts), which is the evidence Auto rates the copy by: a request
sent again agrees with its earlier self for its whole prompt, and is drafted long from its
answer's first token.

Bounded: at most :data:`MAX_TOKENS` tokens (about 10 MB with the index); past that the oldest
half is forgotten. Token ids only (no text), so it is tied to one vocabulary, like the n-gram
tables it sits beside (:class:`~desktop_app.engine.drafters.ngram_cache.ChatNgrams`).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

from desktop_app.engine.api import DRAFT_K

KEY = 16  # tokens a window must match: chat templates end every prompt with the same few tokens
MAX_TOKENS = 100_000  # tokens kept: about 10 MB with the index of their windows
HELD_MAX = DRAFT_K.high  # how far back agreement is counted (the longest copy a pass drafts)
_SEPARATOR = -1  # between learned sequences: a copy never runs from one into the next


class RecentText:
    """Learned token sequences, oldest first, and the latest position after each window of KEY tokens."""

    def __init__(self, max_tokens: int = MAX_TOKENS) -> None:
        self.max_tokens = max_tokens
        self._tokens = array("i")
        self._offset = 0  # sequences forgotten: the absolute position of ``_tokens[0]``
        self._after: dict[int, int] = {}  # hash of a window -> absolute position of the token after it

    def __len__(self) -> int:
        return len(self._tokens)

    @property
    def windows(self) -> int:
        return len(self._after)

    def learn(self, tokens: Sequence[int], start: int = 0) -> None:
        """Keep ``tokens``; index the windows followed by a token at ``start`` or later (the
        tokens before ``start`` are context already learned: the windows reach back into it)."""
        if len(tokens) >= self.max_tokens:  # longer than the whole store: its newest half
            keep = self.max_tokens // 2
            start = max(0, start - (len(tokens) - keep))
            tokens = tokens[-keep:]
        if len(tokens) <= max(start, 1):
            return
        if len(self._tokens) + len(tokens) + 1 > self.max_tokens:
            self._forget(len(tokens) + 1)
        base = self._offset + len(self._tokens) + 1
        self._tokens.append(_SEPARATOR)
        self._tokens.extend(tokens)
        after = self._after
        for i in range(max(start, KEY), len(tokens)):
            after[hash(tuple(tokens[i - KEY : i]))] = base + i

    def _forget(self, room: int) -> None:
        """Drop the oldest sequences: half the store, or more when ``room`` needs it."""
        cut = max(len(self._tokens) // 2, len(self._tokens) + room - self.max_tokens)
        cut = min(cut, len(self._tokens))
        del self._tokens[:cut]
        self._offset += cut
        self._after = {key: at for key, at in self._after.items() if at >= self._offset}

    def copy(self) -> RecentText:
        twin = RecentText(self.max_tokens)
        twin._tokens = array("i", self._tokens)
        twin._offset = self._offset
        twin._after = dict(self._after)
        return twin

    def lookup(self, context: Sequence[int], k: int) -> tuple[list[int], int]:
        """Up to ``k`` tokens that followed the context's last KEY tokens where they last
        occurred, and how many tokens before them the context agrees with (([], 0): none)."""
        if k <= 0 or len(context) < KEY:
            return [], 0
        at = self._after.get(hash(tuple(context[-KEY:])))
        if at is None or at < self._offset:
            return [], 0
        tokens, p = self._tokens, at - self._offset
        held, limit = 0, min(HELD_MAX, len(context), p)
        while held < limit and tokens[p - 1 - held] == context[-1 - held]:
            held += 1
        if held < KEY:  # another window with the same hash
            return [], 0
        out = tokens[p : p + k].tolist()
        if _SEPARATOR in out:
            out = out[: out.index(_SEPARATOR)]
        return out, held
