"""Drafters propose the next few tokens; the target verifies them.

- :class:`ModelDrafter`: a small GGUF model sharing the target's vocabulary.
- :class:`NgramDrafter`: prompt lookup, copying what followed the latest earlier occurrence of
  the context's last n tokens (no model; pays off when answers repeat their input).

A drafter returns tokens and, for each, the distribution q it was drawn from (None when the
choice was deterministic, i.e. q is one-hot); the acceptance rule needs q to stay exact.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from desktop_app.engine.model import LlamaModel
from desktop_app.engine.sampling import SamplingParams, probabilities, sample


@dataclass
class Draft:
    tokens: list[int] = field(default_factory=list)
    q: list[np.ndarray | None] = field(default_factory=list)
    seconds: float = 0.0


class Drafter(Protocol):
    name: str

    def prepare(self, context: list[int]) -> None:
        """Called once per answer with the prompt (a model drafter prefills its cache here)."""

    def draft(
        self, context: list[int], k: int, params: SamplingParams, rng: np.random.Generator, p_min: float
    ) -> Draft: ...


def _top_probability(logits: np.ndarray) -> float:
    shifted = logits - logits.max()
    return float(1.0 / np.exp(shifted).sum())


class ModelDrafter:
    name = "model"
    free = False

    def __init__(self, model: LlamaModel) -> None:
        self.model = model

    def prepare(self, context: list[int]) -> None:
        self.model.prefill(context)

    def draft(
        self, context: list[int], k: int, params: SamplingParams, rng: np.random.Generator, p_min: float
    ) -> Draft:
        start = time.perf_counter()
        out = Draft()
        # Bring the cache in line with the context (decodes only what the last cycle added).
        self.model.prefill(context)
        for i in range(k):
            logits = self.model.logits(-1)
            if params.greedy:
                token = int(np.argmax(logits))
                if p_min > 0.0 and i > 0 and _top_probability(logits) < p_min:
                    break
                out.q.append(None)
            else:
                q = probabilities(logits, params)
                if p_min > 0.0 and i > 0 and float(q.max()) < p_min:
                    break
                token = sample(q, rng)
                out.q.append(q)
            out.tokens.append(token)
            if i + 1 < k:  # the last draft's logits are never needed
                self.model.decode_one(token)
        out.seconds = time.perf_counter() - start
        return out


class NgramDrafter:
    """Prompt lookup: match the context's last ``n`` tokens (longest first) earlier in it."""

    name = "ngram"
    free = True  # proposing costs microseconds: auto mode can score it while drafting is off

    def __init__(self, max_ngram: int = 4, min_ngram: int = 2) -> None:
        self.max_ngram = max_ngram
        self.min_ngram = min_ngram

    def prepare(self, context: list[int]) -> None:
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
