"""Drafters propose the next few tokens; the target verifies them (one module per drafter).

A drafter returns tokens. One that samples draws each from its own distribution q with the
answer's noise at that position (``SamplingNoise.pick``), as the target draws its own token
there; a draft is kept exactly when the two agree, so q itself is not needed afterwards.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from desktop_app.engine.api import DrafterKind, SamplingParams
from desktop_app.engine.sampling_noise import SamplingNoise


class CopySource(StrEnum):
    """Where a model-free proposal was copied from. Text the answer starts reproducing from the
    prompt (a passage to rewrite, code to edit, an earlier answer) usually goes on being copied;
    a phrase the answer repeats of itself breaks off about half the time (the bench's copy
    starts: 25 of 26 first tokens right on rewrite and about 96 of 138 on multi-turn for copies of
    the prompt, 0.29-0.56 for repeats of the answer), so Auto learns each apart."""

    PROMPT = "prompt"
    ANSWER = "answer"
    EARLIER = "earlier"  # an earlier request or answer of this process, matched over a long window
    OTHER = "other"  # not one place: counts over the context or the history


@dataclass
class Draft:
    tokens: list[int] = field(default_factory=list)
    seconds: float = 0.0
    source: CopySource = CopySource.OTHER


@dataclass(frozen=True)
class CostProbe:
    """How a drafter's cost per token is timed at calibration: the filler token to decode, the
    context depth to time it at, how many repetitions, and when to give way."""

    token: int
    depth: int
    reps: int
    should_stop: Callable[[], bool] | None = None


Hidden = tuple[int, np.ndarray]  # (first position, the target's hidden rows from there on)


class Drafter:
    """What the loop asks of every drafter. The defaults suit drafters that need nothing from
    the target but the tokens (a draft model, prompt lookup)."""

    kind: DrafterKind
    free: bool = False  # proposing costs microseconds: auto scores its proposals even while not drafting
    source: CopySource = CopySource.OTHER  # where the latest lookup copied from (model-free drafters)
    held: int = 0  # how many tokens before the latest lookup's copy the context agrees with its source
    needs_hidden: bool = False  # drafts from the target's hidden states (MTP, Gemma 4 assistant)

    def hidden_from(self, context: list[int]) -> int | None:
        """The first position whose target hidden row :meth:`prepare` needs (None: none)."""
        return None

    def prepare(self, context: list[int], hidden: Hidden | None) -> None:
        """Called once per answer with the prompt (after the target cached all but its last token)."""

    def draft(self, context: list[int], k: int, params: SamplingParams, noise: SamplingNoise, p_min: float) -> Draft:
        """Up to ``k`` tokens to follow ``context`` (fewer when confidence drops below ``p_min``);
        a sampled i-th draft is ``noise.pick(q, i)``."""
        raise NotImplementedError

    def accepted(self, tokens: list[int], hidden: np.ndarray | None) -> None:
        """After each target pass: the tokens it committed and (``needs_hidden``) the hidden rows
        of the verify batch (row j produced token j)."""

    def settle(self, cached: list[int]) -> None:
        """The answer ended and the target's cache holds ``cached``: line up for the next one."""

    def lookup(self, context: list[int], k: int) -> list[int]:
        """A proposal at no cost, for scoring while speculation is off ([] when not ``free``)."""
        return []

    def token_cost_s(self, probe: CostProbe) -> float:
        """Seconds per drafted token on this machine (measured where drafting has a cost)."""
        raise NotImplementedError


class LookupDrafter(Drafter):
    """A model-free drafter: its proposal is :meth:`lookup` (greedy, q one-hot), at no cost worth
    measuring, so Auto scores it every cycle."""

    free = True

    def prepare(self, context: list[int], hidden: Hidden | None) -> None:
        pass

    def draft(self, context: list[int], k: int, params: SamplingParams, noise: SamplingNoise, p_min: float) -> Draft:
        start = time.perf_counter()
        tokens = self.lookup(context, k)
        return Draft(tokens, time.perf_counter() - start, self.source)

    def token_cost_s(self, probe: CostProbe) -> float:
        return 0.0  # a few table or array look-ups: microseconds, against a target pass's milliseconds
