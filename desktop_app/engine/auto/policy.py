"""How many tokens to draft per cycle: fixed, off, or chosen from measured costs (auto).

Auto mode picks k to maximise expected tokens per second:

    E(a, k) = (1 - a^(k+1)) / (1 - a)           tokens per target pass
    T(k)    = k * draft_token_s + target_batch_s[k + 1]
    speed   = E(a, k) / T(k)                     (k = 0: 1 / target_batch_s[1])

where the costs are measured on this machine at load time and refined as generation runs, and
the acceptance rate ``a`` is tracked as it goes. When no k > 0 beats plain decoding, it drafts
nothing, and probes now and then (cheaply) so it can switch back when acceptance recovers.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from desktop_app.engine.api import SpecMode
from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.engine.drafters import CopySource

PRIOR_ACCEPTANCE = 0.6
PRIOR_WEIGHT = 4.0  # pseudo-trials behind the prior
HOT_PRIOR = 0.9  # right after a fully accepted draft, the next one usually is too
DECAY = 0.9  # per observed cycle: recent cycles count more
MIN_GAIN = 1.05  # a k > 0 must promise 5% over plain decoding: smaller predicted gains are within the
# cost model's error (it was 15% while calibration undercharged drafts: see timing.time_decodes)
COPY_MIN_GAIN = 1.15  # ... and a model-free proposal 15%. Its promise is a rating averaged over copies of
# every kind, and in a task whose copies break at once (code, math) the proposals that scrape past 5%
# are gambles on a copy's first tokens: replayed over the bench's answers (three measured cost tables)
# the drafts promising 5-15% gave nothing (code 0.988-1.000 of off -> 1.000, the other categories
# within 1%), and on the machine, where every verify pass also pays Auto's bookkeeping and stalls the
# table does not hold, they lost: code 0.95x of off, drafting 14-21 tokens an answer and 30% taken.
CARRY_WEIGHT = 6.0  # trials of evidence a new answer inherits from earlier ones
RUN_CARRY_WEIGHT = 2.0  # ... of a copy run's rate at each length: where copies break is the task's, and
# the task changes with the question (2 against 6: +12% on multi-turn, +2% on chat in the bench's replay)
PESSIMISM = 0.5  # pseudo-failures added when deciding: thin evidence drafts less
RUN_PRIOR_WEIGHT = 2.0  # pseudo-trials behind each copy-run rate's prior, never forgotten
MISS_CAUTION = 1.0  # pseudo-failures of a copied proposal's first token after a miss
CHECK_WEIGHT = 2.0  # pseudo-tokens behind the run tracker's promise when Auto checks it against its drafts


def expected_tokens(a: float, k: int) -> float:
    """Expected tokens per target pass with per-token acceptance ``a`` and ``k`` drafts."""
    if k <= 0:
        return 1.0
    if a >= 1.0:
        return float(k + 1)
    return (1.0 - a ** (k + 1)) / (1.0 - a)


def expected_speed(a: float, k: int, costs: CostModel) -> float:
    return expected_tokens(a, k) / costs.cycle_s(k)


def best_k(a: float, costs: CostModel, k_max: int | None = None) -> tuple[int, float]:
    """The k that maximises expected speed and its predicted speed-up over plain decoding."""
    return best_k_for(lambda k: expected_tokens(a, k), costs, k_max)


def best_k_for(tokens: Callable[[int], float] | Sequence[float], costs: CostModel,
               k_max: int | None = None, min_gain: float = MIN_GAIN) -> tuple[int, float]:
    """The same, for any expected tokens per pass: ``tokens(k)``, or ``tokens[k]`` for every k
    up to the limit; a k whose speed-up is under ``min_gain`` is not worth a pass."""
    limit = costs.k_max if k_max is None else min(k_max, costs.k_max)
    by_k = tokens if isinstance(tokens, Sequence) else [tokens(k) for k in range(limit + 1)]
    limit = min(limit, len(by_k) - 1)
    base = 1.0 / costs.cycle_s(0)
    best, best_speed = 0, base
    for k in range(1, limit + 1):
        speed = by_k[k] / costs.cycle_s(k)
        if speed > best_speed:
            best, best_speed = k, speed
    if best > 0 and best_speed < base * min_gain:
        return 0, 1.0
    return best, best_speed / base


class Policy(Protocol):
    mode: str
    k_max: int

    def choose_k(self) -> int: ...
    def observe(self, drafted: int, accepted: int, draft_s: float, verify_s: float, batch: int,
                source: CopySource = CopySource.OTHER) -> None: ...
    def observe_shadow(self, drafted: int, accepted: int, source: CopySource = CopySource.OTHER) -> None:
        """Score a proposal that was not verified (a free drafter while speculation is off)."""
    def reason(self) -> str: ...


class OffPolicy:
    mode = SpecMode.OFF.value
    k_max = 0

    def choose_k(self) -> int:
        return 0

    def observe(self, drafted: int, accepted: int, draft_s: float, verify_s: float, batch: int,
                source: CopySource = CopySource.OTHER) -> None:
        pass

    def observe_shadow(self, drafted: int, accepted: int, source: CopySource = CopySource.OTHER) -> None:
        pass

    def reason(self) -> str:
        return "speculation off"


@dataclass
class FixedPolicy:
    k_max: int
    mode: str = SpecMode.ON.value

    def choose_k(self) -> int:
        return self.k_max

    def observe(self, drafted: int, accepted: int, draft_s: float, verify_s: float, batch: int,
                source: CopySource = CopySource.OTHER) -> None:
        pass

    def observe_shadow(self, drafted: int, accepted: int, source: CopySource = CopySource.OTHER) -> None:
        pass

    def reason(self) -> str:
        return f"fixed k={self.k_max}"


@dataclass
class AcceptanceTracker:
    """Per-token acceptance with exponential forgetting, started from a weak prior."""

    successes: float = PRIOR_ACCEPTANCE * PRIOR_WEIGHT
    trials: float = PRIOR_WEIGHT
    decay: float = DECAY

    def observe(self, drafted: int, accepted: int) -> None:
        if drafted <= 0:
            return
        # Each drafted position reached is a trial; the first rejection ends the cycle.
        trials = accepted + (1 if accepted < drafted else 0)
        self.successes = self.successes * self.decay + accepted
        self.trials = self.trials * self.decay + trials

    @property
    def rate(self) -> float:
        return self.successes / self.trials if self.trials > 0 else 0.0

    @property
    def cautious_rate(self) -> float:
        """The rate shrunk towards failure by a pseudo-failure: used to pick k."""
        return self.successes / (self.trials + PESSIMISM)

    def start_answer(self, carry: float | None = None) -> None:
        """Keep what earlier answers taught, but weakly (``carry`` trials at most, by default
        :data:`CARRY_WEIGHT`): a new question may be a new task."""
        carry = CARRY_WEIGHT if carry is None else carry
        if self.trials > carry:
            scale = carry / self.trials
            self.successes *= scale
            self.trials = carry


@dataclass
class RunRate:
    """The rate at one copy-run length: a prior that stays, and evidence that is forgotten
    (DECAY per observation) and carried weakly into a new answer. With the prior scaled away
    along with old evidence, two carried successes read as a certainty: a rewrite's long copies
    then drafted 7 tokens at once into a translation, and lost."""

    prior: float
    successes: float = 0.0
    trials: float = 0.0
    fresh: float = 0.0  # positions observed in this answer (verified or in the shadow)

    def observe(self, positions: int, right: int) -> None:
        self.successes = self.successes * DECAY + right
        self.trials = self.trials * DECAY + positions
        self.fresh += positions

    def next_rate(self, caution: float = 0.0) -> float:
        return (self.prior * RUN_PRIOR_WEIGHT + self.successes) / (RUN_PRIOR_WEIGHT + self.trials + caution)

    def start_answer(self, carry: float) -> None:
        self.fresh = 0.0
        if self.trials > carry:
            self.successes *= carry / self.trials
            self.trials = carry


# A copy run's length so far, bucketed: 0, 1-3, 4-7, 8-15, 16 and more. Each run that ends
# teaches a bucket as many trials as it spans, so lengths 1-3 together learn three times as fast
# as each alone did: an answer holds only a few copy starts (replay: rewrite 1.30 -> 1.33x).
RUN_EDGES = (1, 4, 8, 16)
RUN_PRIORS = (PRIOR_ACCEPTANCE, 0.8, HOT_PRIOR, HOT_PRIOR, HOT_PRIOR)  # next token's prior per bucket
# A copy of the prompt starts right more often (CopySource): with the prior above, Auto waited
# for two shadow hits at each start of a rewrite's copies, where fixed k = 8 drafted at once
# (replay at this machine's costs: rewrite 1.13 -> 1.31x, other categories within 1%).
SOURCE_PRIORS = {CopySource.PROMPT: (0.85, HOT_PRIOR, HOT_PRIOR, HOT_PRIOR, HOT_PRIOR)}
# A copy of the prompt is what this prompt holds. Repeats of the answer and counts over the
# context or the history are rated by earlier answers, often of another task: carried from a
# rewrite into a translation, the n-gram map's rating drafted 8 tokens on a 2-token match, and a
# 60-token answer lost 8% in the bench (0 of 14 drafts taken). So for those, each copy length's
# rate is held down by START_CAUTION pseudo-failures until this answer shows copies of that
# length (verified or scored in the shadow; the caution falls as 1 / (1 + positions seen)).
# Replayed over the bench's answers (three measured cost tables), of off: translation 0.977-0.987
# -> 1.000, chat 0.988-0.994 -> 1.000-1.004, code 0.982-0.999 -> 0.990-1.000; math and rewrite
# the same or better; multi-turn 0-2% less (1.77-1.93x).
TRUSTED_AT_START = frozenset({CopySource.PROMPT})
START_CAUTION = 2.0
# A copy that has held this many tokens in this answer is this answer's own: the caution is
# lifted for every length beyond it. Held per length, it slowed every long copy of the history
# or the context to the pace of its buckets: a conversation's earlier answer, copied by the
# n-gram cache token for token, was drafted 2, 3, 3, 3, 3, 6, 10 while fixed k = 12 took 12 a
# pass, and Auto lost 7-13% to the fixed cache on the turns that repeat an earlier answer.
# Replayed at five measured cost tables, multi-turn of the best fixed went 0.92-1.01 -> 0.94-1.03
# (median per turn) and 0.99-1.03 -> 1.00-1.06 (in total time); rewrite 0.95-0.97 -> 0.96-0.99 at
# this machine's tables but 0.95-1.08 -> 0.92-0.96 at older machines' (README, Drafting methods).
PROVEN_RUN = RUN_EDGES[1]


def _cautious(source: CopySource, streak: int) -> bool:
    """Whether a copy of ``source`` that has held ``streak`` tokens is rated with the start caution."""
    return source not in TRUSTED_AT_START and streak < PROVEN_RUN


def run_bucket(length: int) -> int:
    return bisect_right(RUN_EDGES, length)


def run_rates(source: CopySource) -> list[RunRate]:
    return [RunRate(prior) for prior in SOURCE_PRIORS.get(source, RUN_PRIORS)]


@dataclass
class RunTracker:
    """A model-free proposal is copied text: a copy that has held for 20 tokens usually holds
    on, one that just started (a lucky 3-token match, a copy resumed after an edit) often
    breaks at once. So what predicts the next token is the length of the copy run so far: the
    drafter's *streak* (committed tokens its proposals got right in a row) plus the positions
    of the proposal before it. The rate of the next token being right is tracked per run
    length (:data:`RUN_EDGES`): a hazard that falls as runs grow (they are long-tailed, not
    one geometric rate). A proposal of k reaches position j with the product of the rates at
    run lengths streak .. streak + j - 1. Copies of the prompt and of the answer itself are
    tracked apart (:class:`CopySource`).

    Every cycle's positions are evidence, whether the proposal was verified or scored in the
    shadow (in chunks: a run told two tokens at a time is the same run). Thin evidence drafts
    less: a pseudo-failure is added to the first token after a miss (:data:`MISS_CAUTION`),
    where a wrong guess is likeliest, and copies not of the prompt are rated with caution until
    the answer shows its own (:data:`START_CAUTION`, lifted once the copy has held
    :data:`PROVEN_RUN` tokens)."""

    by_source: dict[CopySource, list[RunRate]] = field(default_factory=dict)

    def rates(self, source: CopySource = CopySource.OTHER) -> list[RunRate]:
        found = self.by_source.get(source)
        if found is None:
            found = self.by_source[source] = run_rates(source)
        return found

    def observe(self, streak: int, drafted: int, accepted: int, source: CopySource = CopySource.OTHER) -> None:
        if drafted <= 0:
            return
        reached: dict[int, list[int]] = {}
        for j in range(min(drafted, accepted + 1)):
            counts = reached.setdefault(run_bucket(streak + j), [0, 0])
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
        return self._rate(self.rates(source)[run_bucket(length)], length == 0, _cautious(source, streak))

    @staticmethod
    def _rate(rate: RunRate, after_miss: bool, cautious: bool) -> float:
        caution = MISS_CAUTION if after_miss else 0.0
        if cautious:
            caution += START_CAUTION / (1.0 + rate.fresh)
        return rate.next_rate(caution)

    def expected_tokens(self, streak: int, k: int, source: CopySource = CopySource.OTHER) -> float:
        """Tokens per target pass drafting k after a streak of ``streak`` right tokens."""
        return self.expected_by_k(streak, k, source)[max(k, 0)]

    def expected_by_k(self, streak: int, k_max: int, source: CopySource = CopySource.OTHER) -> list[float]:
        """The same for every k from 0 to ``k_max``, in one pass (Auto asks every cycle, for
        each candidate: a rate is worked out once per length bucket, not per position)."""
        rates = self.rates(source)
        cautious = _cautious(source, streak)
        reach = total = 1.0
        by_k = [1.0]
        bucket, rate = -1, 0.0
        for length in range(streak, streak + k_max):
            now = run_bucket(length)
            if now != bucket:
                bucket, rate = now, self._rate(rates[now], length == 0, cautious)
            reach *= rate
            total += reach
            by_k.append(total)
        return by_k

    def rate(self, streak: int, source: CopySource = CopySource.OTHER) -> float:
        return self.rates(source)[run_bucket(streak)].next_rate()

    def start_answer(self) -> None:
        for rates in self.by_source.values():
            for tracker in rates:
                tracker.start_answer(RUN_CARRY_WEIGHT)


PROBE_EVERY = 8  # cycles off before the first probe, doubling while probes keep missing
PROBE_EVERY_MAX = 256


@dataclass
class ProbeBackoff:
    """When Auto, off, next probes a drafter that runs a model. Kept across answers: on a pair
    whose draft does not pay here, each answer would otherwise start probing every 8 tokens
    again (a batch of 3 and two graph rebuilds each, on a deep CPU target 10% of the answer)."""

    every: int = PROBE_EVERY
    cycles_off: int = 0

    def due(self) -> bool:
        self.cycles_off += 1
        if self.cycles_off < self.every:
            return False
        self.cycles_off = 0
        self.every = min(self.every * 2, PROBE_EVERY_MAX)  # back off while probes keep missing
        return True

    def reset(self) -> None:
        self.every = PROBE_EVERY


@dataclass
class AutoPolicy:
    """Acceptance comes in runs (a copied passage is accepted token after token, then a
    divergence), so it is tracked in two states: after a cycle whose drafts were all accepted
    ("hot") and after one with a rejection ("cold"). Each state has its own rate and k."""

    costs: CostModel
    k_max: int
    mode: str = SpecMode.AUTO.value
    probe: bool = True  # False when a free drafter is scored while off (no probes needed)
    probe_k: int = 2
    acceptance: AcceptanceTracker = field(default_factory=AcceptanceTracker)  # cold state
    hot: AcceptanceTracker = field(default_factory=lambda: AcceptanceTracker(HOT_PRIOR * PRIOR_WEIGHT, PRIOR_WEIGHT))
    _state_hot: bool = False
    _k: int = -1
    _predicted_gain: float = 1.0
    probes: ProbeBackoff = field(default_factory=ProbeBackoff)
    _probing: bool = False
    _stale: bool = False  # observed since the standing k was decided
    # Model-free drafters: their run tracker, which replaces ``acceptance`` and ``hot`` for
    # them, and the drafter's streak: committed tokens its proposals got right in a row.
    runs: RunTracker | None = None
    streak: int = 0
    source: CopySource = CopySource.OTHER  # where the latest proposal scored or drafted came from
    # Per copy source, what the run tracker promised for the drafts verified lately in this answer
    # (tokens beyond the target's own) and what they gave: the ratio corrects its promises
    # (:meth:`_checked`); a prompt's copies are judged apart from the answer's repeats, as rated.
    checks: dict[CopySource, list[float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.acceptance.start_answer()
        self.hot.start_answer()
        if self.runs is not None:
            self.runs.start_answer()
        self._decide()

    def _check(self, run: RunTracker, drafted: int, accepted: int, source: CopySource) -> None:
        """Hold what the run tracker promised for ``drafted`` positions of a copy against what
        they gave. Verified drafts count, and so do proposals scored in the shadow that their
        rating alone would have drafted: once the check had held a source back, only verified
        drafts could lift it, and none came (a rewrite's copies held 26 tokens in the shadow
        while two early misses kept the check at 0.3 and Auto decoded one token at a time)."""
        promise = run.expected_by_k(self.streak, drafted, source)[drafted] - 1.0
        check = self.checks.setdefault(source, [0.0, 0.0])
        check[0] = check[0] * DECAY + promise
        check[1] = check[1] * DECAY + accepted

    def _checked(self, by_k: list[float], source: CopySource) -> list[float]:
        """The run tracker's expected tokens per pass, corrected by how its promises for the
        drafts Auto verified lately turned out. Auto verifies the proposals rated best, and a
        rating is an average over copies of every kind: in a task whose short copies break at
        once (code, math), the drafts chosen kept delivering less than rated, and lost speed."""
        promised, delivered = self.checks.get(source, (0.0, 0.0))
        # a brake, not a spur: copies that held better than rated at the lengths they held do
        # not speak for a length where the tracker has seen them break (a rewrite's 8-token
        # copies, each ending at an edit, lifted 3-token drafts into the edit; replay +1-2%)
        factor = min(1.0, (delivered + CHECK_WEIGHT) / (promised + CHECK_WEIGHT))
        return [1.0 + (e - 1.0) * factor for e in by_k]

    @property
    def tracker(self) -> AcceptanceTracker:
        return self.hot if self._state_hot else self.acceptance

    def _decide(self) -> None:
        if self.runs is not None:
            self._k, self._predicted_gain = self._copy_k(self.runs, self.k_max, self.source)
        else:
            self._k, self._predicted_gain = best_k(self.tracker.cautious_rate, self.costs, self.k_max)
        self._stale = False

    def _fresh(self) -> None:
        """A model-free drafter's k is decided for each proposal (:meth:`offer`); its standing
        k, for the reason shown, only when asked: every cycle would cost time for nothing."""
        if self._stale:
            self._decide()

    def choose_k(self) -> int:
        self._fresh()
        self._probing = False
        if self._k == 0 and self.probe and self.probes.due():
            # Probe: a small draft tells whether acceptance has recovered (backing off while it
            # has not, so probing costs little).
            self._probing = True
            return min(self.probe_k, self.k_max)
        return self._k

    def _record(self, drafted: int, accepted: int, source: CopySource) -> None:
        if drafted <= 0:
            return  # nothing proposed (or scored) this cycle: the state stands
        run = self.runs
        if run is not None:
            self.source = source
            run.observe(self.streak, drafted, accepted, source)
            self.streak = self.streak + accepted if accepted == drafted else 0
        else:
            self.tracker.observe(drafted, accepted)
        self._state_hot = accepted == drafted

    def observe(self, drafted: int, accepted: int, draft_s: float, verify_s: float, batch: int,
                source: CopySource = CopySource.OTHER) -> None:
        if drafted > 0 and self.runs is not None:
            self._check(self.runs, drafted, accepted, source)
        self._record(drafted, accepted, source)
        self.costs.follow(batch, verify_s)
        if drafted > 0 and draft_s > 0:
            self.costs.update_draft(draft_s / drafted)
        if self.runs is not None:
            self._stale = True
            return
        was_off = self._k == 0
        self._decide()
        if was_off and self._k > 0 and accepted == drafted > 0:
            # a probe taken whole: acceptance is back, probe often again (a partly accepted one
            # may turn drafting on, but does not undo the back-off: it is often luck)
            self.probes.reset()

    def observe_shadow(self, drafted: int, accepted: int, source: CopySource = CopySource.OTHER) -> None:
        run = self.runs
        if drafted > 0 and run is not None and best_k_for(
                run.expected_by_k(self.streak, self.k_max, source), self.costs, self.k_max, COPY_MIN_GAIN)[0] > 0:
            self._check(run, drafted, accepted, source)  # a copy its rating alone would have drafted
        self._record(drafted, accepted, source)
        if self.runs is not None:
            self._stale = True
        else:
            self._decide()

    def offer(self, available: int, source: CopySource = CopySource.OTHER) -> tuple[int, float]:
        """For a proposal already made (a model-free drafter's, ``available`` tokens long, copied
        from ``source``): the k to verify of it and the predicted speed-up (0 and 1.0: not worth
        a pass)."""
        limit = min(self.k_max, available)
        if self.runs is not None:
            return self._copy_k(self.runs, limit, source)
        return best_k(self.tracker.cautious_rate, self.costs, limit)

    def _copy_k(self, run: RunTracker, limit: int, source: CopySource) -> tuple[int, float]:
        """A copy's k and gain: the run tracker's expected tokens, checked against what this
        answer's drafts delivered, held to the copy's bar (:data:`COPY_MIN_GAIN`)."""
        return best_k_for(self._checked(run.expected_by_k(self.streak, limit, source), source), self.costs, limit,
                          COPY_MIN_GAIN)

    @property
    def predicted_gain(self) -> float:
        self._fresh()
        return self._predicted_gain

    def reason(self) -> str:
        self._fresh()
        if self.runs is not None:
            a = self.runs.rate(self.streak, self.source)
            state = f"{self.streak} tokens into a copy" if self.streak else "after a miss"
        else:
            a = self.tracker.rate
            state = "after a full accept" if self._state_hot else "after a miss"
        load = self.costs.load_note()
        load = f" ({load})" if load else ""
        if self._k == 0:
            return f"off: acceptance {a:.0%} {state} cannot pay for drafting on this hardware{load}"
        return (f"k={self._k}: acceptance {a:.0%} {state}, predicted {self._predicted_gain:.2f}x over plain "
                f"decoding{load}")
