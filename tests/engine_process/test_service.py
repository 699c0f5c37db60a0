"""The engine process's messages: load progress rising, throttled, always ending on 100 %; answer
text coalesced into runs that keep which drafter made them."""

from __future__ import annotations

from desktop_app.engine.events import TextChunk
from desktop_app.engine_process.protocol import EngineEvent, LoadProgressed, Piece
from desktop_app.engine_process.service import LoadProgress, add_piece


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


def test_answer_text_is_coalesced_into_runs_per_drafter() -> None:
    pieces: list[Piece] = []
    for chunk in (
        TextChunk("The"),
        TextChunk(" quick", True, "ngram"),
        TextChunk(" brown", True, "ngram"),
        TextChunk(" fox", True, "ngram-map"),
        TextChunk(" jumps", True, "ngram"),
        TextChunk(" over"),
        TextChunk(" the"),
        TextChunk(" dog", True, "model"),
    ):
        add_piece(pieces, chunk)
    assert pieces == [
        ("The", ""),
        (" quick brown", "ngram"),
        (" fox", "ngram-map"),
        (" jumps", "ngram"),
        (" over the", ""),
        (" dog", "model"),
    ]
