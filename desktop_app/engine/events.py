"""What ``Engine.generate`` yields: the prompt's progress, text pieces, live statistics, and one final result."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from desktop_app.engine.stats import GenerationStats


@dataclass(frozen=True)
class TextChunk:
    text: str
    from_draft: bool = False  # True when the text came from accepted draft tokens
    drafter: str = ""  # then: the DrafterKind value of the drafter that proposed them


@dataclass(frozen=True)
class PromptProgress:
    """How much of the prompt the target has read: ``done`` of its ``total`` tokens (the cached
    prefix counts as read). Sent when the prompt is ready (with how many of the oldest messages
    were left out to fit the context), then after each batch llama.cpp evaluates."""

    done: int
    total: int
    dropped_turns: int = 0


@dataclass(frozen=True)
class StatsUpdate:
    stats: GenerationStats


@dataclass(frozen=True)
class Finished:
    text: str
    token_ids: list[int] = field(default_factory=list)
    stats: GenerationStats = field(default_factory=GenerationStats)


Event = PromptProgress | TextChunk | StatsUpdate | Finished


def final_result(events: Iterable[Event], on_text: Callable[[TextChunk], None] | None = None) -> Finished:
    """Run a generation to its end and return its Finished event (``on_text`` sees each chunk).

    The generation is closed before this returns: an engine's generation holds the engine until
    it ends, and a caller that kept a reference to it would otherwise block the next one."""
    try:
        for event in events:
            if isinstance(event, Finished):
                return event
            if on_text is not None and isinstance(event, TextChunk):
                on_text(event)
        raise RuntimeError("the generation ended without a Finished event")
    finally:
        close = getattr(events, "close", None)
        if callable(close):
            close()
