"""What ``Engine.generate`` yields: text pieces, live statistics, and one final result."""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop_app.engine.stats import GenerationStats


@dataclass(frozen=True)
class TextChunk:
    text: str
    from_draft: bool = False  # True when the text came from accepted draft tokens


@dataclass(frozen=True)
class StatsUpdate:
    stats: GenerationStats


@dataclass(frozen=True)
class Finished:
    text: str
    token_ids: list[int] = field(default_factory=list)
    stats: GenerationStats = field(default_factory=GenerationStats)


Event = TextChunk | StatsUpdate | Finished
