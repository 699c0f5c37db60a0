"""Drafters propose the next few tokens; the target verifies them (one module per drafter).

A drafter returns tokens and, for each, the distribution q it was drawn from (None when the
choice was deterministic, i.e. q is one-hot); the acceptance rule needs q to stay exact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from desktop_app.engine.api import DrafterKind, SamplingParams


@dataclass
class Draft:
    tokens: list[int] = field(default_factory=list)
    q: list[np.ndarray | None] = field(default_factory=list)
    seconds: float = 0.0


@dataclass(frozen=True)
class CostProbe:
    """How a drafter's cost per token is timed at calibration: the filler token to decode, the
    context depth to time it at, how many repetitions, and when to give way."""

    token: int
    depth: int
    reps: int
    should_stop: Callable[[], bool] | None = None


class Drafter(Protocol):
    kind: DrafterKind
    free: bool  # proposing costs microseconds: auto scores its proposals even while not drafting

    def prepare(self, context: list[int]) -> None:
        """Called once per answer with the prompt (a model drafter prefills its cache here)."""

    def draft(
        self, context: list[int], k: int, params: SamplingParams, rng: np.random.Generator, p_min: float
    ) -> Draft:
        """Up to ``k`` tokens to follow ``context`` (fewer when confidence drops below ``p_min``)."""

    def lookup(self, context: list[int], k: int) -> list[int]:
        """A proposal at no cost, for scoring while speculation is off ([] when not ``free``)."""

    def token_cost_s(self, probe: CostProbe) -> float:
        """Seconds per drafted token on this machine (measured where drafting has a cost)."""
