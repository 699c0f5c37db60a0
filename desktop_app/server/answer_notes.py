"""What every answer says about itself beyond its protocol's own fields, on every endpoint:
``timings`` (llama.cpp's server's, with what speculation did) and ``warnings`` (the oldest
messages left out to fit the context: the answer is to a shorter conversation than was sent).
The count of messages left out is also the ``X-SpecChat-Dropped-Messages`` header whenever it is
known before the headers go (always for a whole answer; for a stream, unless it waited behind
another request)."""

from __future__ import annotations

from typing import Any

from desktop_app.engine.events import PromptProgress
from desktop_app.engine.stats import GenerationStats
from desktop_app.server.openai_schema import timings

DROPPED_HEADER = "X-SpecChat-Dropped-Messages"


def dropped_warning(dropped: int) -> str:
    those = "oldest message was" if dropped == 1 else f"{dropped:,} oldest messages were"
    return f"the {those} left out: the conversation does not fit the model's context"


def warnings(stats: GenerationStats) -> list[str]:
    return [dropped_warning(stats.dropped_turns)] if stats.dropped_turns > 0 else []


def noted(payload: dict[str, Any], stats: GenerationStats) -> dict[str, Any]:
    """``payload`` (an answer, or its last streamed event) with ``timings`` and its warnings."""
    payload["timings"] = timings(stats)
    if found := warnings(stats):
        payload["warnings"] = found
    return payload


def dropped_headers(dropped: int) -> dict[str, str]:
    return {DROPPED_HEADER: str(dropped)} if dropped > 0 else {}


def stream_headers(first: object) -> dict[str, str]:
    """A stream's headers from its first event (a PromptProgress once its prompt is ready)."""
    return dropped_headers(first.dropped_turns) if isinstance(first, PromptProgress) else {}
