"""The n-gram cache: drafts from what the user's own chats said before.

Two tables of n-gram -> follower counts (:mod:`ngram_counts`): ``history``, learned from the
saved conversations and kept on disk (:mod:`desktop_app.engine.ngram_store`), and ``session``,
the answers of this run. The same code, names and phrases come back across turns and
conversations; this drafter proposes them even when the current context never held them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np

from desktop_app.engine.api import DrafterKind, SamplingParams
from desktop_app.engine.drafters import CostProbe, Draft, Drafter, Hidden
from desktop_app.engine.drafters.ngram_counts import Confidence, NgramCounts
from desktop_app.engine.ngram_store import HISTORY_ORDERS

HISTORY_RULE = Confidence(min_count=2, min_share=0.6)  # seen twice, and most of the time
SESSION_RULE = Confidence(min_count=1, min_share=0.6)
LOOKUP_TOKEN_S = 2e-5


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
        longest = max(HISTORY_ORDERS)
        window = list(context[-longest:])
        out: list[int] = []
        while len(out) < k:
            token = history.best(window, HISTORY_RULE)
            if token is None:
                token = session.best(window, SESSION_RULE)
            if token is None:
                break
            out.append(token)
            window = window[1:] + [token] if len(window) >= longest else window + [token]
        return out


class NgramCacheDrafter(Drafter):
    kind = DrafterKind.NGRAM_CACHE
    free = True

    def __init__(self, ngrams: ChatNgrams) -> None:
        self.ngrams = ngrams

    def prepare(self, context: list[int], hidden: Hidden | None) -> None:
        pass

    def lookup(self, context: list[int], k: int) -> list[int]:
        return self.ngrams.chain(context, k) if k > 0 else []

    def draft(
        self, context: list[int], k: int, params: SamplingParams, rng: np.random.Generator, p_min: float
    ) -> Draft:
        start = time.perf_counter()
        tokens = self.lookup(context, k)
        return Draft(tokens, [None] * len(tokens), time.perf_counter() - start)

    def token_cost_s(self, probe: CostProbe) -> float:
        return LOOKUP_TOKEN_S
