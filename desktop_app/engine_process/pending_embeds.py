"""Embed commands the engine process has not answered yet, kept on the window's side.

Each is answered exactly once (in the GUI thread, where the window's EngineClient calls these):
with the engine's :class:`Embedded`, or with :class:`EngineLost` when the process died or was
stopped first, so its answer will never come.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from desktop_app.engine_process.protocol import Embedded


@dataclass(frozen=True)
class EngineLost:
    """The engine went away before it answered: why, in words a user can read."""

    reason: str


EmbedAnswer = Callable[[Embedded | EngineLost], None]


class PendingEmbeds:
    """The answer callbacks of the Embed commands sent to one engine process, by request id."""

    def __init__(self) -> None:
        self._waiting: dict[int, EmbedAnswer] = {}

    def __len__(self) -> int:
        return len(self._waiting)

    def add(self, request_id: int, answer: EmbedAnswer) -> None:
        self._waiting[request_id] = answer

    def answer(self, event: Embedded) -> None:
        answer = self._waiting.pop(event.id, None)
        if answer is not None:
            answer(event)

    def lose_all(self, reason: str) -> None:
        """The process is gone: every waiting request hears why."""
        waiting, self._waiting = self._waiting, {}
        for answer in waiting.values():
            answer(EngineLost(reason))
