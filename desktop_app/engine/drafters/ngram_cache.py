"""The n-gram cache: drafts from what the user's own chats said before.

Two tables of n-gram -> follower counts (:mod:`ngram_counts`): ``history``, learned from the
saved conversations and kept on disk (:mod:`desktop_app.engine.drafters.ngram_store`), and ``session``,
the prompts and answers of this run; and ``recent``, this run's prompts and answers as text
(:mod:`recent_text`), from which a request seen before is copied whole, from its first token.
The same code, names and phrases come back across turns, conversations and requests; this
drafter proposes them even when the current context never held them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from desktop_app.engine.api import DrafterKind
from desktop_app.engine.drafters import CopySource, LookupDrafter
from desktop_app.engine.drafters.ngram_counts import Confidence, NgramCounts, chain
from desktop_app.engine.drafters.ngram_store import HISTORY_ORDERS
from desktop_app.engine.drafters.recent_text import HELD_MAX, RecentText

HISTORY_RULE = Confidence(min_count=2, min_share=0.6)  # seen twice, and most of the time
SESSION_RULE = Confidence(min_count=1, min_share=0.6)


class ChatNgrams:
    """The engine's two tables and this run's text; the history table is replaced whole (never
    edited) by the history side."""

    def __init__(self) -> None:
        self.history = NgramCounts(HISTORY_ORDERS)
        self.session = NgramCounts(HISTORY_ORDERS)
        self.recent = RecentText()
        self._lock = threading.Lock()

    def use_history(self, counts: NgramCounts, forget_session: bool) -> None:
        """Swap in the tables learned from the history (``forget_session`` after a deletion:
        this run's answers may hold the deleted text)."""
        with self._lock:
            self.history = counts
            if forget_session:
                self.session = NgramCounts(HISTORY_ORDERS)
                self.recent = RecentText()

    def learn(self, tokens: Sequence[int], start: int = 0) -> None:
        """Learn ``tokens`` from ``start`` on (those before it are context learned already:
        the n-grams and windows that end at ``start`` or later reach back into it)."""
        with self._lock:
            self.session.add(tokens, start)
            self.recent.learn(tokens, start)

    def learn_turn(self, prompt: Sequence[int], new: int, answer: Sequence[int]) -> None:
        """Learn a turn: the ``new`` last tokens of the prompt (those the last turns did not hold)
        and the answer, keyed by the context before them, so a request sent again is copied from
        its answer's first token on."""
        begin = len(prompt) - new
        lead = min(begin, HELD_MAX)
        self.learn([*prompt[begin - lead :], *answer], start=lead)

    def clear(self) -> None:
        self.use_history(NgramCounts(HISTORY_ORDERS), forget_session=True)

    def __len__(self) -> int:
        return len(self.history) + len(self.session)

    def snapshot(self) -> tuple[NgramCounts, NgramCounts, RecentText]:
        """What the tables and text hold now (for benchmarks: every mode starts from the same cache)."""
        with self._lock:
            return self.history, self.session.copy(), self.recent.copy()

    def restore(self, state: tuple[NgramCounts, NgramCounts, RecentText]) -> None:
        with self._lock:
            self.history, self.session, self.recent = state[0], state[1].copy(), state[2].copy()

    def chain(self, context: Sequence[int], k: int) -> list[int]:
        """Up to ``k`` tokens: each the confident follower in the history, else in this session."""
        history, session = self.history, self.session  # one consistent pair for the whole proposal

        def follower(window: list[int]) -> int | None:
            token = history.best(window, HISTORY_RULE)
            return token if token is not None else session.best(window, SESSION_RULE)

        return chain(follower, context, k, max(HISTORY_ORDERS))


class NgramCacheDrafter(LookupDrafter):
    """A copy of an earlier request's text where the context's last tokens match it (source
    :attr:`CopySource.EARLIER`, ``held`` its agreement so far), else the tables' chain."""

    kind = DrafterKind.NGRAM_CACHE

    def __init__(self, ngrams: ChatNgrams) -> None:
        self.ngrams = ngrams

    def lookup(self, context: list[int], k: int) -> list[int]:
        if k <= 0:
            return []
        copy, held = self.ngrams.recent.lookup(context, k)
        if copy:
            self.source, self.held = CopySource.EARLIER, held
            return copy
        self.source, self.held = CopySource.OTHER, 0
        return self.ngrams.chain(context, k)
