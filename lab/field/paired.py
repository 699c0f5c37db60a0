"""The field bench's arithmetic: who goes first in a round, and same-round ratios.

A shared machine's speed drifts by more than the differences measured, so two sides are run
back to back in every round, the one going first alternating, and compared by the median of
the ratios taken within each round (never a ratio of medians taken minutes apart).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field


def alternating(sides: Sequence[str], turn: int) -> list[str]:
    """The sides in the order of turn ``turn``: each turn starts one further along (for two
    sides: A, B then B, A), so neither always runs first on a just-woken machine."""
    start = turn % len(sides)
    return [*sides[start:], *sides[:start]]


def median_ratio(numerators: Sequence[float], denominators: Sequence[float]) -> float:
    """The median over rounds of ``numerators[r] / denominators[r]`` (the same round's pair)."""
    if len(numerators) != len(denominators) or not numerators:
        raise ValueError("a same-round ratio needs one figure of each side per round")
    return statistics.median(a / b for a, b in zip(numerators, denominators))


def interleaving(conversations: Sequence[str], requests: int) -> list[str]:
    """Which conversation each request goes to when a user switches between them (A, B, A, ...)."""
    return [conversations[i % len(conversations)] for i in range(requests)]


def follow_ups(order: Sequence[str]) -> list[bool]:
    """Per request of ``order``: whether its conversation was asked before (a follow-up, whose
    prompt starts with what the server read last time for it) or not (a cold read)."""
    seen: set[str] = set()
    out = []
    for conversation in order:
        out.append(conversation in seen)
        seen.add(conversation)
    return out


@dataclass
class Paired:
    """One figure per side per round (seconds or tokens/s), filled round by round."""

    sides: tuple[str, str]
    runs: dict[str, list[float]] = field(default_factory=dict)

    def add(self, side: str, value: float) -> None:
        self.runs.setdefault(side, []).append(value)

    def median(self, side: str) -> float:
        return statistics.median(self.runs[side])

    def ratio(self) -> float:
        """The median of same-round ratios, the second side over the first."""
        first, second = self.sides
        return median_ratio(self.runs[second], self.runs[first])
