"""The n-gram cache: drafts from what the user's own chats said before.

Two tables of n-gram -> follower counts (:mod:`ngram_counts`): ``history``, learned from the
saved conversations and kept on disk (:mod:`desktop_app.engine.drafters.ngram_store`), and ``session``,
the answers of this run. The same code, names and phrases come back across turns and
conversations; this drafter proposes them even when the current context never held them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from desktop_app.engine.api import DrafterKind
from desktop_app.engine.drafters import LookupDrafter
from desktop_app.engine.drafters.ngram_counts import Confidence, NgramCounts, chain
from desktop_app.engine.drafters.ngram_store import HISTORY_ORDERS

HISTORY_RULE = Confidence(min_count=2, min_share=0.6)  # seen twice, and most of the time
SESSION_RULE = Confidence(min_count=1, min_share=0.6)


class ChatNgrams:
    """The engine's two tables; replaced whole (never edited) by the history side."""

    def __init__(self) -> None:
        self.history = NgramCounts(HISTORY_ORDERS)
        self.session = NgramCounts(HISTORY_ORDERS)
        self._lock = threading.Lock()

    def use_history(self, counts: NgramCounts, forget_session: bool) -> None:
        """Swap in the tables learned from the history (``forget_session`` after a deletion:
        this run's answers may hold the deleted text)."""
        with self._lock:
            self.history = counts
            if forget_session:
                self.session = NgramCounts(HISTORY_ORDERS)

    def learn(self, tokens: Sequence[int]) -> None:
        with self._lock:
            self.session.add(tokens)

    def clear(self) -> None:
        self.use_history(NgramCounts(HISTORY_ORDERS), forget_session=True)

    def __len__(self) -> int:
        return len(self.history) + len(self.session)

    def snapshot(self) -> tuple[NgramCounts, NgramCounts]:
        """What both tables hold now (for benchmarks: every mode starts from the same cache)."""
        with self._lock:
            return self.history, self.session.copy()

    def restore(self, state: tuple[NgramCounts, NgramCounts]) -> None:
        with self._lock:
            self.history, self.session = state[0], state[1].copy()

    def chain(self, context: Sequence[int], k: int) -> list[int]:
        """Up to ``k`` tokens: each the confident follower in the history, else in this session."""
        history, session = self.history, self.session  # one consistent pair for the whole proposal

        def follower(window: list[int]) -> int | None:
            token = history.best(window, HISTORY_RULE)
            return token if token is not None else session.best(window, SESSION_RULE)

        return chain(follower, context, k, max(HISTORY_ORDERS))


class NgramCacheDrafter(LookupDrafter):
    kind = DrafterKind.NGRAM_CACHE

    def __init__(self, ngrams: ChatNgrams) -> None:
        self.ngrams = ngrams

    def lookup(self, context: list[int], k: int) -> list[int]:
        return self.ngrams.chain(context, k) if k > 0 else []
