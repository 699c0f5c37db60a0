"""What Auto tracks of a drafter that runs a model: its acceptance, and when to probe it again.

The numbers are :class:`~desktop_app.engine.auto.tunables.AutoTunables` fields (docs/auto.md,
"The acceptance estimate" and "Switching back on").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop_app.engine.auto.tunables import DEFAULT_TUNABLES, AutoTunables


@dataclass
class AcceptanceTracker:
    """Per-token acceptance with exponential forgetting, started from a weak prior."""

    successes: float = DEFAULT_TUNABLES.prior_acceptance * DEFAULT_TUNABLES.prior_weight
    trials: float = DEFAULT_TUNABLES.prior_weight
    tunables: AutoTunables = DEFAULT_TUNABLES

    @classmethod
    def from_prior(cls, prior: float, tunables: AutoTunables = DEFAULT_TUNABLES) -> AcceptanceTracker:
        """A tracker starting at ``prior`` with the tunables' weight behind it."""
        return cls(prior * tunables.prior_weight, tunables.prior_weight, tunables)

    def observe(self, drafted: int, accepted: int) -> None:
        if drafted <= 0:
            return
        # Each drafted position reached is a trial; the first rejection ends the cycle.
        trials = accepted + (1 if accepted < drafted else 0)
        decay = self.tunables.decay
        self.successes = self.successes * decay + accepted
        self.trials = self.trials * decay + trials

    @property
    def rate(self) -> float:
        return self.successes / self.trials if self.trials > 0 else 0.0

    @property
    def cautious_rate(self) -> float:
        """The rate shrunk towards failure by a pseudo-failure: used to pick k."""
        return self.successes / (self.trials + self.tunables.pessimism)

    def start_answer(self, carry: float | None = None) -> None:
        """Keep what earlier answers taught, but weakly (``carry`` trials at most, by default
        the tunables' ``carry_weight``): a new question may be a new task."""
        carry = self.tunables.carry_weight if carry is None else carry
        if self.trials > carry:
            scale = carry / self.trials
            self.successes *= scale
            self.trials = carry


@dataclass
class ProbeBackoff:
    """When Auto, off, next probes a drafter that runs a model. Kept across answers: on a pair
    whose draft does not pay here, each answer would otherwise start probing every 8 tokens
    again (a batch of 3 and two graph rebuilds each, on a deep CPU target 10% of the answer)."""

    tunables: AutoTunables = DEFAULT_TUNABLES
    every: int = field(init=False)  # cycles off before the next probe
    cycles_off: int = 0

    def __post_init__(self) -> None:
        self.every = self.tunables.probe_every

    def due(self) -> bool:
        self.cycles_off += 1
        if self.cycles_off < self.every:
            return False
        self.cycles_off = 0
        self.every = min(self.every * 2, self.tunables.probe_every_max)  # back off while probes keep missing
        return True

    def reset(self) -> None:
        self.every = self.tunables.probe_every
