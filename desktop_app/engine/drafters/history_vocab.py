"""The loaded target's tokenizer, lent to the thread that keeps the history n-grams in sync.

That thread runs beside the engine's own (loading, answering). Every use here takes the
engine's lock for one call, so it waits while an answer or a load runs (an answer waits at most
for one message's tokenization) and the model is never freed under it; once another target (or
none) is loaded, every use raises :class:`TargetChanged`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from desktop_app.engine.drafters.ngram_cache import ChatNgrams
from desktop_app.engine.drafters.ngram_counts import NgramCounts
from desktop_app.engine.errors import EngineError

if TYPE_CHECKING:
    from desktop_app.engine.llama.model import LlamaModel


class TargetChanged(EngineError):
    """The target a history sync started with was replaced (or unloaded): its work is void."""


class HistoryVocab:
    """``fingerprint`` and ``n_vocab`` of the target loaded when it was made, and its plain-text
    tokenizer (no BOS, special tokens' text read as text, as in a chat message)."""

    def __init__(
        self, model: LlamaModel, lock: threading.Lock, current: Callable[[], LlamaModel | None], ngrams: ChatNgrams
    ) -> None:
        self._model = model
        self._lock = lock
        self._current = current
        self._ngrams = ngrams
        self.fingerprint = model.vocab_fingerprint
        self.n_vocab = model.n_vocab

    def _check(self) -> None:
        if self._current() is not self._model:
            raise TargetChanged("another target was loaded")

    def tokenize(self, text: str) -> list[int]:
        with self._lock:
            self._check()
            return self._model.tokenize(text, add_special=False, parse_special=False)

    def use_history(self, counts: NgramCounts, forget_session: bool) -> None:
        """Give the engine's n-gram cache ``counts`` as its history table (after the answer
        being generated, if any, has ended and learned its n-grams: ``forget_session`` forgets
        them too)."""
        with self._lock:
            self._check()
            self._ngrams.use_history(counts, forget_session)
