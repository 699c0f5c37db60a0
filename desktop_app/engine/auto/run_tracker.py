"""Auto's one estimator: how long a draft from a source holds, by how long it has held so far.

Every drafter's proposals come in runs: a copy that has held for 20 tokens usually holds on,
one that just started (a lucky 3-token match, a copy resumed after an edit) often breaks at
once, and a draft model's tokens right after a fully accepted draft are likelier right than
after a miss. So the chance that the next token is right is tracked per source and per run
length so far, in buckets that double (0, 1, 2-3, 4-7, 8-15, 16-31, 32+): a hazard that falls
as runs grow. Each bucket is a Beta distribution: a prior that is never forgotten, under
evidence forgotten at one ``decay`` per observation. Auto plans with the lower credible bound
of each rate (``caution`` standard deviations under it), so thin evidence drafts less.

The numbers are :class:`~desktop_app.engine.auto.tunables.AutoTunables` fields (docs/auto.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from desktop_app.engine.api import DRAFT_K
from desktop_app.engine.auto.tunables import DEFAULT_TUNABLES, AutoTunables
from desktop_app.engine.drafters import CopySource

# run lengths 0, 1, 2-3, 4-7, 8-15, 16-31, 32+: the last from half the longest copy (64) on
BUCKETS = (DRAFT_K.high // 2).bit_length() + 1


def bucket(length: int) -> int:
    """The bucket of a run ``length`` tokens long so far (lengths that double share one)."""
    return min(max(length, 0).bit_length(), BUCKETS - 1)


def prior_rate(start: float, b: int) -> float:
    """The prior chance the next token is right in bucket ``b``: the miss rate at length 0,
    ``1 - start``, falls as 1 / (1 + length) (at the bucket's shortest length)."""
    shortest = 0 if b == 0 else 2 ** (b - 1)
    return 1.0 - (1.0 - start) / (1.0 + shortest)


@dataclass
class RunRate:
    """The rate at one run-length bucket: a Beta prior (``prior`` behind ``prior_weight``
    pseudo-trials) that stays, and evidence that is forgotten. With the prior scaled away along
    with old evidence, two carried successes read as a certainty: a rewrite's long copies then
    drafted 7 tokens at once into a translation, and lost."""

    prior: float
    tunables: AutoTunables = DEFAULT_TUNABLES
    successes: float = 0.0
    trials: float = 0.0

    def observe(self, positions: int, right: int) -> None:
        decay = self.tunables.decay
        self.successes = self.successes * decay + right
        self.trials = self.trials * decay + positions

    @property
    def mean(self) -> float:
        weight = self.tunables.prior_weight
        return (self.prior * weight + self.successes) / (weight + self.trials)

    @property
    def bound(self) -> float:
        """The lower credible bound Auto plans with: the Beta's mean less ``caution`` of its
        standard deviations."""
        mean, n = self.mean, self.tunables.prior_weight + self.trials
        return max(0.0, mean - self.tunables.caution * math.sqrt(mean * (1.0 - mean) / (n + 1.0)))

    def start_answer(self) -> None:
        """Keep what earlier answers taught, weighing at most as much as the prior: a new
        question may be a new task."""
        carry = self.tunables.prior_weight
        if self.trials > carry:
            self.successes *= carry / self.trials
            self.trials = carry


@dataclass
class RunTracker:
    """The rates of one drafter's proposals, per source (:class:`CopySource`: copies of the
    prompt, of the answer, of earlier requests, counts) and run-length bucket. A proposal of k
    made ``streak`` tokens into a run reaches position j with the product of the rates at run
    lengths streak .. streak + j - 1.

    Every cycle's positions are evidence, whether the proposal was verified or scored in the
    shadow (a run told token by token is the same run)."""

    tunables: AutoTunables = DEFAULT_TUNABLES
    by_source: dict[CopySource, list[RunRate]] = field(default_factory=dict)

    def rates(self, source: CopySource = CopySource.OTHER) -> list[RunRate]:
        found = self.by_source.get(source)
        if found is None:
            t = self.tunables
            start = t.prompt_prior if source is CopySource.PROMPT else t.start_prior
            found = self.by_source[source] = [RunRate(prior_rate(start, b), t) for b in range(BUCKETS)]
        return found

    def observe(self, streak: int, drafted: int, accepted: int, source: CopySource = CopySource.OTHER) -> None:
        if drafted <= 0:
            return
        reached: dict[int, list[int]] = {}
        for j in range(min(drafted, accepted + 1)):
            counts = reached.setdefault(bucket(streak + j), [0, 0])
            counts[0] += 1
            counts[1] += j < accepted
        rates = self.rates(source)
        for b, (positions, right) in reached.items():
            rates[b].observe(positions, right)

    def next_rate(self, length: int, source: CopySource = CopySource.OTHER) -> float:
        """The chance (its lower credible bound) that the next token is right ``length`` tokens into a run."""
        return self.rates(source)[bucket(length)].bound

    def expected_tokens(self, streak: int, k: int, source: CopySource = CopySource.OTHER) -> float:
        """Tokens per target pass drafting k after a streak of ``streak`` right tokens."""
        return self.expected_by_k(streak, k, source)[max(k, 0)]

    def expected_by_k(self, streak: int, k_max: int, source: CopySource = CopySource.OTHER) -> list[float]:
        """The same for every k from 0 to ``k_max``, in one pass (Auto asks every cycle, for
        each candidate: a rate is worked out once per bucket, not per position)."""
        rates = self.rates(source)
        reach = total = 1.0
        by_k = [1.0]
        current, rate = -1, 0.0
        for length in range(streak, streak + k_max):
            now = bucket(length)
            if now != current:
                current, rate = now, rates[now].bound
            reach *= rate
            total += reach
            by_k.append(total)
        return by_k

    def rate(self, streak: int, source: CopySource = CopySource.OTHER) -> float:
        """The estimate itself (for the reason shown)."""
        return self.rates(source)[bucket(streak)].mean

    def start_answer(self) -> None:
        for rates in self.by_source.values():
            for tracker in rates:
                tracker.start_answer()
