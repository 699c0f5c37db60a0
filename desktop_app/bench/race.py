"""The speed race's plan and verdict: the last prompt without speculation and with the user's
choice, in turns (off, chosen, off, chosen, ...), so a machine's drift hits both alike; the
verdict is the median of each round's speed ratio with its spread, never one lucky run."""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass

from desktop_app.engine.api import DrafterKind, GenerateRequest, SpecMode
from desktop_app.engine.stats import GenerationStats

RACE_ROUNDS = 3  # rounds of (off, chosen) a race runs by default
OFF_LANE = "off"
CHOSEN_LANE = "chosen"
LANES = (OFF_LANE, CHOSEN_LANE)


def chosen_request(request: GenerateRequest, drafter: DrafterKind) -> GenerateRequest:
    """What the chat would answer with: ``request`` as the user's settings made it, or, when the
    user chose Off, Auto with ``drafter`` (racing off against off says nothing)."""
    if request.spec is SpecMode.OFF:
        return dataclasses.replace(request, spec=SpecMode.AUTO, drafter=drafter)
    return request


def race_runs(
    request: GenerateRequest, drafter: DrafterKind, rounds: int = RACE_ROUNDS
) -> list[tuple[str, GenerateRequest]]:
    """The race's runs in order: (lane, request), off first in every round."""
    off = dataclasses.replace(request, spec=SpecMode.OFF, drafter=None)
    chosen = chosen_request(request, drafter)
    return [run for _ in range(rounds) for run in ((OFF_LANE, off), (CHOSEN_LANE, chosen))]


def mode_words(request: GenerateRequest) -> str:
    """The chosen lane's name: "Auto (prompt lookup)", "Always 8 drafted (draft model)"."""
    who = f" ({request.drafter.label.lower()})" if request.drafter is not None else ""
    if request.spec is SpecMode.ON:
        return f"Always {request.draft_max} drafted{who}"
    return f"{request.spec.label}{who}"


def speed(stats: GenerationStats) -> float:
    return stats.decode_tokens_per_s


def speedup(off: GenerationStats, on: GenerationStats) -> float:
    """How many times faster the speculative run decoded (tokens/s on / tokens/s off)."""
    slow, fast = speed(off), speed(on)
    return fast / slow if slow > 0 else 0.0


@dataclass(frozen=True)
class RaceResult:
    """Each round's runs, without speculation and with the user's choice (``mode``)."""

    mode: str
    off: tuple[GenerationStats, ...]
    chosen: tuple[GenerationStats, ...]
    identical: bool  # every run gave the same text

    @property
    def rounds(self) -> int:
        return min(len(self.off), len(self.chosen))

    @property
    def ratios(self) -> list[float]:
        """Each round's speed with the choice over its speed without speculation."""
        return [speedup(off, on) for off, on in zip(self.off, self.chosen, strict=False)]

    @property
    def speedup(self) -> float:
        """The median of the rounds' ratios."""
        return statistics.median(self.ratios) if self.ratios else 0.0

    @property
    def spread(self) -> tuple[float, float]:
        ratios = self.ratios
        return (min(ratios), max(ratios)) if ratios else (0.0, 0.0)

    @property
    def off_speed(self) -> float:
        return statistics.median(speed(s) for s in self.off) if self.off else 0.0

    @property
    def chosen_speed(self) -> float:
        return statistics.median(speed(s) for s in self.chosen) if self.chosen else 0.0

    def as_stats(self) -> dict[str, float | int]:
        """What an answer's stats keep of the race (read by message_format.format_speedup)."""
        low, high = self.spread
        return {"speedup": round(self.speedup, 3), "rounds": self.rounds, "low": round(low, 3), "high": round(high, 3)}

    def verdict(self) -> str:
        low, high = self.spread
        ratio = self.speedup
        if ratio >= 1.05:
            words = f"{ratio:.2f}x faster than"
        elif ratio <= 1 / 1.05 and ratio > 0:
            words = f"{1 / ratio:.2f}x slower than"
        else:
            words = "about as fast as"
        return (
            f"{self.mode}: {words} without speculation (median of {self.rounds} round{'' if self.rounds == 1 else 's'}; "
            f"{low:.2f}–{high:.2f}x per round; {self.chosen_speed:.1f} vs {self.off_speed:.1f} tokens/s)"
        )
