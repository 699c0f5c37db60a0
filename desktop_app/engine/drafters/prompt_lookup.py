"""Prompt lookup: copy what followed the latest earlier occurrence of the context's last n tokens.

No model: it pays off when answers repeat their input (rewrites, code edits, quotes).
"""

from __future__ import annotations

import time

import numpy as np

from desktop_app.engine.api import DrafterKind, SamplingParams
from desktop_app.engine.drafters import CostProbe, Draft, Drafter, Hidden

LOOKUP_TOKEN_S = 2e-5  # proposing is a few numpy comparisons: microseconds


class PromptLookupDrafter(Drafter):
    """Match the context's last ``n`` tokens (longest first, down to ``min_ngram``) earlier in it."""

    kind = DrafterKind.NGRAM
    free = True

    def __init__(self, max_ngram: int = 4, min_ngram: int = 3) -> None:
        self.max_ngram = max_ngram
        self.min_ngram = min_ngram

    def prepare(self, context: list[int], hidden: Hidden | None) -> None:
        pass

    def draft(
        self, context: list[int], k: int, params: SamplingParams, rng: np.random.Generator, p_min: float
    ) -> Draft:
        start = time.perf_counter()
        tokens = self.lookup(context, k)
        return Draft(tokens, [None] * len(tokens), time.perf_counter() - start)

    def lookup(self, context: list[int], k: int) -> list[int]:
        length = len(context)
        if k <= 0 or length < self.min_ngram + 1:
            return []
        ctx = np.asarray(context, dtype=np.int32)
        for n in range(min(self.max_ngram, length - 1), self.min_ngram - 1, -1):
            pattern = ctx[length - n :]
            candidates = length - n  # windows starting before the suffix itself
            match = np.ones(candidates, dtype=bool)
            for j in range(n):
                match &= ctx[j : j + candidates] == pattern[j]
            hits = np.flatnonzero(match)
            if hits.size:
                begin = int(hits[-1]) + n
                return [int(t) for t in ctx[begin : begin + k]]
        return []

    def token_cost_s(self, probe: CostProbe) -> float:
        return LOOKUP_TOKEN_S
