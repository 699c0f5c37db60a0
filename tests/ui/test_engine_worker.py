"""The engine process's load progress messages: rising, throttled, always ending on 100 %."""

from __future__ import annotations

from desktop_app.ui.engine_protocol import EngineEvent, LoadProgressed
from desktop_app.ui.engine_worker import LoadProgress


def _recorder(interval_s: float) -> tuple[LoadProgress, list[float]]:
    """A LoadProgress for the draft and the fractions it would send down the pipe."""
    fractions: list[float] = []

    def send(event: EngineEvent) -> None:
        assert isinstance(event, LoadProgressed) and event.stage == "draft"
        fractions.append(event.fraction)

    return LoadProgress(send, "draft", interval_s=interval_s), fractions


def test_a_flood_of_loader_calls_becomes_a_few_rising_messages_ending_on_one() -> None:
    progress, fractions = _recorder(interval_s=3600)
    for fraction in (0.0, 0.1, 0.2, 0.5, 0.4, 0.9, 1.0, 1.0):
        progress(fraction)
    progress.done()
    assert fractions == [0.0, 1.0]  # the first, then 1.0 (never throttled), once


def test_done_reports_one_when_the_loader_stopped_short() -> None:
    progress, fractions = _recorder(interval_s=0.0)
    for fraction in (0.2, 0.1, 0.7):
        progress(fraction)
    progress.done()
    assert fractions == [0.2, 0.7, 1.0]
