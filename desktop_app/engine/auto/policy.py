"""How many tokens to draft per cycle: fixed, off, or chosen from measured costs (auto).

Auto mode picks k to maximise expected tokens per second:

    E(a, k) = (1 - a^(k+1)) / (1 - a)           tokens per target pass
    T(k)    = k * draft_token_s + target_batch_s[k + 1]
    speed   = E(a, k) / T(k)                     (k = 0: 1 / target_batch_s[1])

where the costs are measured on this machine at load time and refined as generation runs, and
the acceptance rate ``a`` is tracked as it goes. When no k > 0 beats plain decoding, it drafts
nothing, and probes now and then (cheaply) so it can switch back when acceptance recovers.

The trackers it reads live in acceptance.py (drafters that run a model) and run_tracker.py
(copies); every number it is tuned with is an :class:`AutoTunables` field (tunables.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from desktop_app.engine.api import SpecMode
from desktop_app.engine.auto.acceptance import AcceptanceTracker, ProbeBackoff
from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.engine.auto.run_tracker import RunTracker
from desktop_app.engine.auto.tunables import DEFAULT_TUNABLES, AutoTunables
from desktop_app.engine.drafters import CopySource

__all__ = [
    "AcceptanceTracker",
    "AutoPolicy",
    "FixedPolicy",
    "OffPolicy",
    "Policy",
    "ProbeBackoff",
    "RunTracker",
    "best_k",
    "best_k_for",
    "expected_speed",
    "expected_tokens",
]


def expected_tokens(a: float, k: int) -> float:
    """Expected tokens per target pass with per-token acceptance ``a`` and ``k`` drafts."""
    if k <= 0:
        return 1.0
    if a >= 1.0:
        return float(k + 1)
    return (1.0 - a ** (k + 1)) / (1.0 - a)


def expected_speed(a: float, k: int, costs: CostModel) -> float:
    return expected_tokens(a, k) / costs.cycle_s(k)


def best_k(
    a: float, costs: CostModel, k_max: int | None = None, min_gain: float = DEFAULT_TUNABLES.min_gain
) -> tuple[int, float]:
    """The k that maximises expected speed and its predicted speed-up over plain decoding."""
    return best_k_for(lambda k: expected_tokens(a, k), costs, k_max, min_gain)


def best_k_for(
    tokens: Callable[[int], float] | Sequence[float],
    costs: CostModel,
    k_max: int | None = None,
    min_gain: float = DEFAULT_TUNABLES.min_gain,
) -> tuple[int, float]:
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
    def observe(
        self,
        drafted: int,
        accepted: int,
        draft_s: float,
        verify_s: float,
        batch: int,
        source: CopySource = CopySource.OTHER,
    ) -> None: ...
    def observe_shadow(self, drafted: int, accepted: int, source: CopySource = CopySource.OTHER) -> None:
        """Score a proposal that was not verified (a free drafter while speculation is off)."""

    def reason(self) -> str: ...


class OffPolicy:
    mode = SpecMode.OFF.value
    k_max = 0

    def choose_k(self) -> int:
        return 0

    def observe(
        self,
        drafted: int,
        accepted: int,
        draft_s: float,
        verify_s: float,
        batch: int,
        source: CopySource = CopySource.OTHER,
    ) -> None:
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

    def observe(
        self,
        drafted: int,
        accepted: int,
        draft_s: float,
        verify_s: float,
        batch: int,
        source: CopySource = CopySource.OTHER,
    ) -> None:
        pass

    def observe_shadow(self, drafted: int, accepted: int, source: CopySource = CopySource.OTHER) -> None:
        pass

    def reason(self) -> str:
        return f"fixed k={self.k_max}"


class AutoPolicy:
    """Acceptance comes in runs (a copied passage is accepted token after token, then a
    divergence), so it is tracked in two states: after a cycle whose drafts were all accepted
    ("hot") and after one with a rejection ("cold"). Each state has its own rate and k.

    Model-free drafters have a run tracker (``runs``) instead, which replaces ``acceptance`` and
    ``hot`` for them, and a streak: committed tokens their proposals got right in a row. The
    trackers not given start from the ``tunables``' priors."""

    mode = SpecMode.AUTO.value

    def __init__(
        self,
        costs: CostModel,
        k_max: int,
        *,
        probe: bool = True,
        tunables: AutoTunables = DEFAULT_TUNABLES,
        acceptance: AcceptanceTracker | None = None,
        hot: AcceptanceTracker | None = None,
        probes: ProbeBackoff | None = None,
        runs: RunTracker | None = None,
        streak: int = 0,
    ) -> None:
        self.costs = costs
        self.k_max = k_max
        self.probe = probe  # False when a free drafter is scored while off (no probes needed)
        self.tunables = tunables
        t = tunables
        self.acceptance = acceptance if acceptance is not None else AcceptanceTracker.from_prior(t.prior_acceptance, t)
        self.hot = hot if hot is not None else AcceptanceTracker.from_prior(t.hot_prior, t)
        self.probes = probes if probes is not None else ProbeBackoff(t)
        self.runs = runs
        self.streak = streak
        self.source = CopySource.OTHER  # where the latest proposal scored or drafted came from
        # Per copy source, what the run tracker promised for the drafts verified lately in this
        # answer (tokens beyond the target's own) and what they gave: the ratio corrects its
        # promises (:meth:`_checked`); a prompt's copies are judged apart from the answer's repeats.
        self.checks: dict[CopySource, list[float]] = {}
        self._state_hot = False
        self._k = -1
        self._predicted_gain = 1.0
        self._probing = False
        self._stale = False  # observed since the standing k was decided
        self.acceptance.start_answer()
        self.hot.start_answer()
        if self.runs is not None:
            self.runs.start_answer()
        self._decide()

    @property
    def probing(self) -> bool:
        """Whether the k last chosen is a probe (a small draft while Auto is off)."""
        return self._probing

    def _check(self, run: RunTracker, drafted: int, accepted: int, source: CopySource) -> None:
        """Hold what the run tracker promised for ``drafted`` positions of a copy against what
        they gave. Verified drafts count, and so do proposals scored in the shadow that their
        rating alone would have drafted: once the check had held a source back, only verified
        drafts could lift it, and none came (a rewrite's copies held 26 tokens in the shadow
        while two early misses kept the check at 0.3 and Auto decoded one token at a time)."""
        promise = run.expected_by_k(self.streak, drafted, source)[drafted] - 1.0
        check = self.checks.setdefault(source, [0.0, 0.0])
        check[0] = check[0] * self.tunables.decay + promise
        check[1] = check[1] * self.tunables.decay + accepted

    def _checked(self, by_k: list[float], source: CopySource) -> list[float]:
        """The run tracker's expected tokens per pass, corrected by how its promises for the
        drafts Auto verified lately turned out. Auto verifies the proposals rated best, and a
        rating is an average over copies of every kind: in a task whose short copies break at
        once (code, math), the drafts chosen kept delivering less than rated, and lost speed."""
        promised, delivered = self.checks.get(source, (0.0, 0.0))
        # a brake, not a spur: copies that held better than rated at the lengths they held do
        # not speak for a length where the tracker has seen them break (a rewrite's 8-token
        # copies, each ending at an edit, lifted 3-token drafts into the edit; replay +1-2%)
        weight = self.tunables.check_weight
        factor = min(1.0, (delivered + weight) / (promised + weight))
        return [1.0 + (e - 1.0) * factor for e in by_k]

    @property
    def tracker(self) -> AcceptanceTracker:
        return self.hot if self._state_hot else self.acceptance

    def _decide(self) -> None:
        if self.runs is not None:
            self._k, self._predicted_gain = self._copy_k(self.runs, self.k_max, self.source)
        else:
            self._k, self._predicted_gain = best_k(
                self.tracker.cautious_rate, self.costs, self.k_max, self.tunables.min_gain
            )
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
            return min(self.tunables.probe_k, self.k_max)
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

    def observe(
        self,
        drafted: int,
        accepted: int,
        draft_s: float,
        verify_s: float,
        batch: int,
        source: CopySource = CopySource.OTHER,
    ) -> None:
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
        if (
            drafted > 0
            and run is not None
            and best_k_for(
                run.expected_by_k(self.streak, self.k_max, source), self.costs, self.k_max, self.tunables.copy_min_gain
            )[0]
            > 0
        ):
            self._check(run, drafted, accepted, source)  # a copy its rating alone would have drafted
        self._record(drafted, accepted, source)
        if self.runs is not None:
            self._stale = True
        else:
            self._decide()

    def offer(self, available: int, source: CopySource = CopySource.OTHER, held: int = 0) -> tuple[int, float]:
        """For a proposal already made (a model-free drafter's, ``available`` tokens long, copied
        from ``source``, whose source the context already agrees with for ``held`` tokens): the
        k to verify of it and the predicted speed-up (0 and 1.0: not worth a pass). The copy has
        held for as long as that agreement: its run is at least that long."""
        limit = min(self.k_max, available)
        if self.runs is not None:
            self.streak = max(self.streak, held)
            return self._copy_k(self.runs, limit, source)
        return best_k(self.tracker.cautious_rate, self.costs, limit, self.tunables.min_gain)

    def _copy_k(self, run: RunTracker, limit: int, source: CopySource) -> tuple[int, float]:
        """A copy's k and gain: the run tracker's expected tokens, checked against what this
        answer's drafts delivered, held to the copy's bar (``copy_min_gain``)."""
        return best_k_for(
            self._checked(run.expected_by_k(self.streak, limit, source), source),
            self.costs,
            limit,
            self.tunables.copy_min_gain,
        )

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
        return (
            f"k={self._k}: acceptance {a:.0%} {state}, predicted {self._predicted_gain:.2f}x over plain decoding{load}"
        )
