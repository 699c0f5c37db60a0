"""The speed race: the last prompt with speculation off, then on, side by side."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop_app.engine.api import DrafterKind, GenerateRequest, SpecMode
from desktop_app.engine.stats import GenerationStats
from desktop_app.engine_process.protocol import Done
from desktop_app.ui.engine_client import EngineClient, GenerationHandle
from desktop_app.ui.message_format import format_footer

LANES = (SpecMode.OFF.value, SpecMode.ON.value)  # the race runs the same request in both modes


def speedup(off: GenerationStats, on: GenerationStats) -> float:
    """How many times faster the speculative run decoded (tokens/s on / tokens/s off)."""
    slow, fast = off.decode_tokens_per_s, on.decode_tokens_per_s
    return fast / slow if slow > 0 else 0.0


@dataclass(frozen=True)
class RaceResult:
    off: GenerationStats
    on: GenerationStats
    speedup: float
    identical: bool  # the same text with and without speculation


class RaceDialog(QDialog):
    """Runs the race on the engine and shows it; non-modal, so the window stays usable.

    Signals:
        race_finished(RaceResult): both runs' stats, the speed-up and whether the texts match.
        race_failed(str): a run failed or the engine went away.
    """

    race_finished = Signal(object)
    race_failed = Signal(str)

    def __init__(self, client: EngineClient, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("raceDialog")
        self.setWindowTitle("Speed race: speculation off vs on")
        self.setAccessibleName("Speed race")
        self.resize(900, 520)
        self.client = client
        self.texts: dict[str, QPlainTextEdit] = {}
        self.stats_labels: dict[str, QLabel] = {}
        self.results: dict[str, GenerationStats] = {}
        self.answers: dict[str, str] = {}
        self._queue: list[tuple[str, GenerateRequest]] = []
        self._lane: str | None = None
        self._handle: GenerationHandle | None = None
        grid = QGridLayout()
        for column, lane in enumerate(LANES):
            title = QLabel(f"<b>Speculation {lane}</b>")
            text = QPlainTextEdit()
            text.setObjectName(f"race{lane.capitalize()}Text")
            text.setReadOnly(True)
            text.setAccessibleName(f"Answer with speculation {lane}")
            stats = QLabel("waiting…")
            stats.setObjectName(f"race{lane.capitalize()}Stats")
            stats.setWordWrap(True)
            grid.addWidget(title, 0, column)
            grid.addWidget(text, 1, column)
            grid.addWidget(stats, 2, column)
            self.texts[lane], self.stats_labels[lane] = text, stats
        self.summary = QLabel("Running…")
        self.summary.setObjectName("raceSummary")
        self.summary.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.summary.setStyleSheet("font-size: 14pt; font-weight: bold;")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addLayout(grid, 1)
        layout.addWidget(self.summary)
        layout.addWidget(buttons)
        client.engine_crashed.connect(self._on_failed)

    @property
    def running(self) -> bool:
        return self._lane is not None

    def start(self, request: GenerateRequest, drafter: DrafterKind) -> None:
        """Race ``request`` (same seed, temperature, max tokens) with speculation off, then on."""
        self.results.clear()
        self.answers.clear()
        for lane in LANES:
            self.texts[lane].clear()
            self.stats_labels[lane].setText("waiting…")
        self.summary.setText("Running speculation off…")
        self._queue = [
            (SpecMode.OFF.value, dataclasses.replace(request, spec=SpecMode.OFF, drafter=None)),
            (SpecMode.ON.value, dataclasses.replace(request, spec=SpecMode.ON, drafter=drafter)),
        ]
        self._next()

    def _next(self) -> None:
        if not self._queue:
            self._lane = self._handle = None
            self._report()
            return
        self._lane, request = self._queue.pop(0)
        self.summary.setText(f"Running speculation {self._lane}…")
        handle = self.client.generate(request)
        handle.token_received.connect(self._on_token)
        handle.finished.connect(self._on_finished)
        handle.failed.connect(self._on_failed)
        self._handle = handle

    def _from_current(self) -> bool:
        return self._handle is not None and self.sender() is self._handle

    @Slot(str, str)
    def _on_token(self, text: str, _drafter: str) -> None:
        if self._from_current() and self._lane is not None:
            edit = self.texts[self._lane]
            edit.moveCursor(edit.textCursor().MoveOperation.End)
            edit.insertPlainText(text)

    @Slot(object)
    def _on_finished(self, done: Done) -> None:
        if self._lane is None or not self._from_current():
            return
        self.results[self._lane] = done.stats
        self.answers[self._lane] = done.text
        self.texts[self._lane].setPlainText(done.text)
        self.stats_labels[self._lane].setText(format_footer(done.stats.to_dict()))
        self._next()

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        if self._lane is None:
            return
        self._queue.clear()
        self._lane = self._handle = None
        self.summary.setText(f"Race stopped: {message}")
        self.race_failed.emit(message)

    def _report(self) -> None:
        if set(self.results) != set(LANES):
            self.summary.setText("Race cancelled")
            return
        off, on = self.results[SpecMode.OFF.value], self.results[SpecMode.ON.value]
        factor = speedup(off, on)
        identical = self.answers[SpecMode.OFF.value] == self.answers[SpecMode.ON.value]
        same = "identical text" if identical else "the texts differ (sampling at temperature > 0?)"
        self.summary.setText(f"Speculation on: {factor:.2f}× the speed of off · {same}")
        self.race_finished.emit(RaceResult(off, on, factor, identical))

    def stop(self) -> None:
        """Stop the race: the run in progress ends as cancelled, the next one never starts."""
        if self.running:
            self._queue.clear()
            if self._handle is not None:
                self.client.cancel(self._handle)

    def closeEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        self.stop()
        super().closeEvent(event)
