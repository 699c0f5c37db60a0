"""How likely a model-free drafter's copy goes on: rates per copy-run length, per copy source.

The numbers it is tuned with are :class:`~desktop_app.engine.auto.tunables.AutoTunables` fields;
docs/auto.md ("The acceptance estimate") explains each and the evidence behind it.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from desktop_app.engine.auto.tunables import DEFAULT_TUNABLES, AutoTunables
from desktop_app.engine.drafters import CopySource


@dataclass
class RunRate:
    """The rate at one copy-run length: a prior that stays, and evidence that is forgotten
    (``decay`` per observation) and carried weakly into a new answer. With the prior scaled away
    along with old evidence, two carried successes read as a certainty: a rewrite's long copies
    then drafted 7 tokens at once into a translation, and lost."""

    prior: float
    tunables: AutoTunables = DEFAULT_TUNABLES
    successes: float = 0.0
    trials: float = 0.0
    fresh: float = 0.0  # positions observed in this answer (verified or in the shadow)

    def observe(self, positions: int, right: int) -> None:
        decay = self.tunables.decay
        self.successes = self.successes * decay + right
        self.trials = self.trials * decay + positions
        self.fresh += positions

    def next_rate(self, caution: float = 0.0) -> float:
        weight = self.tunables.run_prior_weight
        return (self.prior * weight + self.successes) / (weight + self.trials + caution)

    def start_answer(self, carry: float) -> None:
        self.fresh = 0.0
        if self.trials > carry:
            self.successes *= carry / self.trials
            self.trials = carry


# A copy run's length so far is bucketed (``run_edges``: 0, 1-3, 4-7, 8-15, 16 and more). Each
# run that ends teaches a bucket as many trials as it spans, so lengths 1-3 together learn three
# times as fast as each alone did: an answer holds only a few copy starts.
#
# A copy of the prompt starts right more often (``source_priors``), and it is what this prompt
# holds. Repeats of the answer and counts over the context or the history are rated by earlier
# answers, often of another task, so for those each copy length's rate is held down by
# ``start_caution`` pseudo-failures until this answer shows copies of that length (verified or
# scored in the shadow; the caution falls as 1 / (1 + positions seen)), and lifted for every
# length once the copy has held ``proven_run`` tokens in this answer.


@dataclass
class RunTracker:
    """A model-free proposal is copied text: a copy that has held for 20 tokens usually holds
    on, one that just started (a lucky 3-token match, a copy resumed after an edit) often
    breaks at once. So what predicts the next token is the length of the copy run so far: the
    drafter's *streak* (committed tokens its proposals got right in a row) plus the positions
    of the proposal before it. The rate of the next token being right is tracked per run
    length (``run_edges``): a hazard that falls as runs grow (they are long-tailed, not
    one geometric rate). A proposal of k reaches position j with the product of the rates at
    run lengths streak .. streak + j - 1. Copies of the prompt and of the answer itself are
    tracked apart (:class:`CopySource`).

    Every cycle's positions are evidence, whether the proposal was verified or scored in the
    shadow (in chunks: a run told two tokens at a time is the same run). Thin evidence drafts
    less: a pseudo-failure is added to the first token after a miss (``miss_caution``), where a
    wrong guess is likeliest, and copies not of the prompt are rated with caution until the
    answer shows its own (``start_caution``, lifted once the copy has held ``proven_run``
    tokens)."""

    tunables: AutoTunables = DEFAULT_TUNABLES
    by_source: dict[CopySource, list[RunRate]] = field(default_factory=dict)

    def bucket(self, length: int) -> int:
        """The run-length bucket of a copy ``length`` tokens long so far."""
        return bisect_right(self.tunables.run_edges, length)

    def rates(self, source: CopySource = CopySource.OTHER) -> list[RunRate]:
        found = self.by_source.get(source)
        if found is None:
            priors = self.tunables.source_priors.get(source, self.tunables.run_priors)
            found = self.by_source[source] = [RunRate(prior, self.tunables) for prior in priors]
        return found

    def _cautious(self, source: CopySource, streak: int) -> bool:
        """Whether a copy of ``source`` that has held ``streak`` tokens is rated with the start caution."""
        return source not in self.tunables.trusted_at_start and streak < self.tunables.proven_run

    def observe(self, streak: int, drafted: int, accepted: int, source: CopySource = CopySource.OTHER) -> None:
        if drafted <= 0:
            return
        reached: dict[int, list[int]] = {}
        for j in range(min(drafted, accepted + 1)):
            counts = reached.setdefault(self.bucket(streak + j), [0, 0])
            counts[0] += 1
            counts[1] += j < accepted
        rates = self.rates(source)
        for bucket, (positions, right) in reached.items():
            rates[bucket].observe(positions, right)

    def next_rate(self, length: int, source: CopySource = CopySource.OTHER, streak: int | None = None) -> float:
        """The chance the next token is right, ``length`` tokens into a copy that has held
        ``streak`` tokens so far (by default ``length``): cautious after a miss, and, for a source
        not trusted at start, at lengths this answer has not shown yet unless the copy has."""
        streak = length if streak is None else streak
        return self._rate(self.rates(source)[self.bucket(length)], length == 0, self._cautious(source, streak))

    def _rate(self, rate: RunRate, after_miss: bool, cautious: bool) -> float:
        caution = self.tunables.miss_caution if after_miss else 0.0
        if cautious:
            caution += self.tunables.start_caution / (1.0 + rate.fresh)
        return rate.next_rate(caution)

    def expected_tokens(self, streak: int, k: int, source: CopySource = CopySource.OTHER) -> float:
        """Tokens per target pass drafting k after a streak of ``streak`` right tokens."""
        return self.expected_by_k(streak, k, source)[max(k, 0)]

    def expected_by_k(self, streak: int, k_max: int, source: CopySource = CopySource.OTHER) -> list[float]:
        """The same for every k from 0 to ``k_max``, in one pass (Auto asks every cycle, for
        each candidate: a rate is worked out once per length bucket, not per position)."""
        rates = self.rates(source)
        cautious = self._cautious(source, streak)
        reach = total = 1.0
        by_k = [1.0]
        bucket, rate = -1, 0.0
        for length in range(streak, streak + k_max):
            now = self.bucket(length)
            if now != bucket:
                bucket, rate = now, self._rate(rates[now], length == 0, cautious)
            reach *= rate
            total += reach
            by_k.append(total)
        return by_k

    def rate(self, streak: int, source: CopySource = CopySource.OTHER) -> float:
        return self.rates(source)[self.bucket(streak)].next_rate()

    def start_answer(self) -> None:
        for rates in self.by_source.values():
            for tracker in rates:
                tracker.start_answer(self.tunables.run_carry_weight)
