"""How many tokens to draft per cycle: fixed, off, or chosen from measured costs (auto).

Auto picks k to maximise expected tokens per second:

    E(k)  = 1 + sum over j = 1..k of r(s) * r(s + 1) * ... * r(s + j - 1)   tokens per target pass
    T(k)  = k * draft_token_s + target_batch_s[k + 1]
    speed = E(k) / T(k)                                                       (k = 0: 1 / target_batch_s[1])

where r(n) is the lower credible bound of the chance that a token n tokens into a run is right
(run_tracker.py, per drafter and source), s the run so far, and the costs are the calibrated
table times one level (cost_model.py). A k whose speed is under ``min_gain`` times plain
decoding's is not worth a pass; when no k is, it drafts nothing, and probes a drafter that runs
a model now and then (probes.py). Every number is an :class:`AutoTunables` field (tunables.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from desktop_app.engine.api import SpecMode
from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.engine.auto.probes import ProbeBackoff
from desktop_app.engine.auto.run_tracker import RunTracker
from desktop_app.engine.auto.tunables import DEFAULT_TUNABLES, AutoTunables
from desktop_app.engine.drafters import CopySource

__all__ = [
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
    """Auto's k for one drafter, from its run tracker (``runs``) and the costs. For a model-free
    drafter (``runs`` given, shared across its answers) each proposal is judged as it is made
    (:meth:`offer`), from how long the copy has held; a drafter that runs a model (``runs`` not
    given: its own tracker) drafts the k its run so far makes best, and is probed while off.

    ``streak``: the tokens its proposals got right in a row, the run the next token extends."""

    mode = SpecMode.AUTO.value

    def __init__(
        self,
        costs: CostModel,
        k_max: int,
        *,
        probe: bool = True,
        tunables: AutoTunables = DEFAULT_TUNABLES,
        probes: ProbeBackoff | None = None,
        runs: RunTracker | None = None,
        model: RunTracker | None = None,
        streak: int = 0,
    ) -> None:
        self.costs = costs
        self.k_max = k_max
        self.probe = probe  # False when a free drafter is scored while off (no probes needed)
        self.tunables = tunables
        self.copies = runs is not None  # a model-free drafter's proposals (else a model's drafts)
        self.runs = runs if runs is not None else model if model is not None else RunTracker(tunables)
        self.probes = probes if probes is not None else ProbeBackoff(tunables)
        self.streak = streak
        self.source = CopySource.OTHER  # where the latest proposal scored or drafted came from
        self._k = -1
        self._predicted_gain = 1.0
        self._probing = False
        self._stale = False  # observed since the standing k was decided
        self.runs.start_answer()
        self._decide()

    @property
    def probing(self) -> bool:
        """Whether the k last chosen is a probe (a small draft while Auto is off)."""
        return self._probing

    def _decide(self) -> None:
        self._k, self._predicted_gain = self._best(self.k_max, self.source)
        self._stale = False

    def _best(self, limit: int, source: CopySource) -> tuple[int, float]:
        return best_k_for(
            self.runs.expected_by_k(self.streak, limit, source), self.costs, limit, self.tunables.min_gain
        )

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
        self.source = source
        self.runs.observe(self.streak, drafted, accepted, source)
        self.streak = self.streak + accepted if accepted == drafted else 0

    def observe(
        self,
        drafted: int,
        accepted: int,
        draft_s: float,
        verify_s: float,
        batch: int,
        source: CopySource = CopySource.OTHER,
    ) -> None:
        self._record(drafted, accepted, source)
        self.costs.follow(batch, verify_s)
        if drafted > 0 and draft_s > 0:
            self.costs.update_draft(draft_s / drafted)
        if self.copies:
            self._stale = True
            return
        was_off = self._k == 0
        self._decide()
        if was_off and self._k > 0 and accepted == drafted > 0:
            # a probe taken whole: acceptance is back, probe often again (a partly accepted one
            # may turn drafting on, but does not undo the back-off: it is often luck)
            self.probes.reset()

    def observe_shadow(self, drafted: int, accepted: int, source: CopySource = CopySource.OTHER) -> None:
        self._record(drafted, accepted, source)
        if self.copies:
            self._stale = True
        else:
            self._decide()

    def offer(self, available: int, source: CopySource = CopySource.OTHER, held: int = 0) -> tuple[int, float]:
        """For a proposal already made (a model-free drafter's, ``available`` tokens long, copied
        from ``source``, whose source the context already agrees with for ``held`` tokens): the
        k to verify of it and the predicted speed-up (0 and 1.0: not worth a pass). The copy has
        held for as long as that agreement: its run is at least that long."""
        self.streak = max(self.streak, held)
        return self._best(min(self.k_max, available), source)

    @property
    def predicted_gain(self) -> float:
        self._fresh()
        return self._predicted_gain

    def reason(self) -> str:
        self._fresh()
        a = self.runs.rate(self.streak, self.source)
        if self.copies:
            state = f"{self.streak} tokens into a copy" if self.streak else "after a miss"
        else:
            state = "after a full accept" if self.streak else "after a miss"
        load = self.costs.load_note()
        load = f" ({load})" if load else ""
        if self._k == 0:
            return f"off: acceptance {a:.0%} {state} cannot pay for drafting on this hardware{load}"
        return (
            f"k={self._k}: acceptance {a:.0%} {state}, predicted {self._predicted_gain:.2f}x over plain decoding{load}"
        )
