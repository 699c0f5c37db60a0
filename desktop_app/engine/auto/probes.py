"""When Auto, drafting nothing, next probes a drafter that runs a model.

The numbers are :class:`~desktop_app.engine.auto.tunables.AutoTunables` fields (docs/auto.md,
"Switching back on").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop_app.engine.auto.tunables import DEFAULT_TUNABLES, AutoTunables


@dataclass
class ProbeBackoff:
    """Kept across answers: on a pair whose draft does not pay here, each answer would otherwise
    start probing every 8 tokens again (a batch of 3 and two graph rebuilds each, on a deep CPU
    target 10% of the answer)."""

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
