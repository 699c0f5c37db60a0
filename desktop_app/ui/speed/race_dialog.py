"""The speed race's window: the last prompt without speculation and with the user's choice, in
turns, side by side (the plan and the verdict are in :mod:`desktop_app.bench.race`)."""

from __future__ import annotations

import sqlite3
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop_app.bench.race import CHOSEN_LANE, LANES, OFF_LANE, RACE_ROUNDS, RaceResult, mode_words, race_runs, speed
from desktop_app.engine.api import DrafterKind, GenerateRequest
from desktop_app.engine.stats import GenerationStats
from desktop_app.engine_process.protocol import Done
from desktop_app.store import History
from desktop_app.ui.engine.engine_client import EngineClient, GenerationHandle
from desktop_app.ui.transcript.chat_view import ChatView


def keep_race(history: History, conversation_id: int | None, view: ChatView, result: RaceResult) -> bool:
    """The race's verdict joins the raced answer (the conversation's last) in the history and in
    its footer ("1.4x faster than without speculation in a race of 3"); False when there is no
    such answer or the history cannot be written (the side panel still shows the verdict)."""
    stored = history.messages(conversation_id) if conversation_id else []
    if not stored or stored[-1].role != "assistant" or not view.messages or view.messages[-1].role != "assistant":
        return False
    stats = {**(stored[-1].stats or {}), "race": result.as_stats()}
    try:
        history.update_message(stored[-1].id, stored[-1].content, stats)
    except sqlite3.Error:
        return False
    view.messages[-1].set_stats(stats)
    return True


def _plain_label(text: str = "", name: str = "") -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)  # model text and errors show as written
    label.setWordWrap(True)
    if name:
        label.setObjectName(name)
    return label


class RaceDialog(QDialog):
    """Runs the race on the engine and shows it; non-modal, so the window stays usable.

    Signals:
        race_finished(RaceResult): every round's stats, the median speed-up and its spread.
        race_failed(str): a run failed or the engine went away.
    """

    race_finished = Signal(object)
    race_failed = Signal(str)

    def __init__(self, client: EngineClient, parent: QWidget | None = None, rounds: int = RACE_ROUNDS) -> None:
        super().__init__(parent)
        self.setObjectName("raceDialog")
        self.setWindowTitle("Speed race: without speculation vs your choice")
        self.setAccessibleName("Speed race")
        self.resize(900, 560)
        self.client = client
        self.rounds = rounds
        self.mode = ""  # the chosen lane's name
        self.texts: dict[str, QPlainTextEdit] = {}
        self.titles: dict[str, QLabel] = {}
        self.stats_labels: dict[str, QLabel] = {}
        self.results: dict[str, list[GenerationStats]] = {lane: [] for lane in LANES}
        self.answers: dict[str, list[str]] = {lane: [] for lane in LANES}
        self.requests: list[GenerateRequest] = []  # every run's request, in the order run
        self._queue: list[tuple[str, GenerateRequest]] = []
        self._lane: str | None = None
        self._handle: GenerationHandle | None = None
        grid = QGridLayout()
        bold = QFont(self.font())
        bold.setBold(True)
        for column, lane in enumerate(LANES):
            title = _plain_label()
            title.setFont(bold)
            text = QPlainTextEdit()
            text.setObjectName(f"race{lane.capitalize()}Text")
            text.setReadOnly(True)
            stats = _plain_label("waiting…", f"race{lane.capitalize()}Stats")
            grid.addWidget(title, 0, column)
            grid.addWidget(text, 1, column)
            grid.addWidget(stats, 2, column)
            self.titles[lane], self.texts[lane], self.stats_labels[lane] = title, text, stats
        self.summary = _plain_label("Running…", "raceSummary")
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
        """Race ``request`` (as the chat's settings made it: same seed, temperature, max tokens)
        without speculation and as chosen, ``rounds`` times in turns; a choice of Off races Auto
        with ``drafter``."""
        runs = race_runs(request, drafter, self.rounds)
        self.mode = mode_words(runs[1][1])
        self.requests = []
        for lane in LANES:
            self.results[lane].clear()
            self.answers[lane].clear()
            self.texts[lane].clear()
            self.stats_labels[lane].setText("waiting…")
        self.titles[OFF_LANE].setText("Without speculation")
        self.titles[CHOSEN_LANE].setText(f"With {self.mode}")
        self._queue = runs
        self._next()

    def _next(self) -> None:
        if not self._queue:
            self._lane = self._handle = None
            self._report()
            return
        self._lane, request = self._queue.pop(0)
        self.requests.append(request)
        done = len(self.requests) - 1
        lane = "without speculation" if self._lane == OFF_LANE else f"with {self.mode}"
        self.summary.setText(f"Round {done // 2 + 1} of {self.rounds}: {lane}…")
        self.texts[self._lane].clear()
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
        self.results[self._lane].append(done.stats)
        self.answers[self._lane].append(done.text)
        self.texts[self._lane].setPlainText(done.text)
        runs = [f"round {i + 1}: {speed(s):.1f} tokens/s" for i, s in enumerate(self.results[self._lane])]
        self.stats_labels[self._lane].setText("\n".join(runs))
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
        off, chosen = self.results[OFF_LANE], self.results[CHOSEN_LANE]
        if len(off) != self.rounds or len(chosen) != self.rounds:
            self.summary.setText("Race cancelled")
            return
        texts = {*self.answers[OFF_LANE], *self.answers[CHOSEN_LANE]}
        result = RaceResult(self.mode, tuple(off), tuple(chosen), identical=len(texts) == 1)
        for lane, runs in ((OFF_LANE, off), (CHOSEN_LANE, chosen)):
            median = result.off_speed if lane == OFF_LANE else result.chosen_speed
            lines = [f"round {i + 1}: {speed(s):.1f} tokens/s" for i, s in enumerate(runs)]
            self.stats_labels[lane].setText("\n".join([*lines, f"median: {median:.1f} tokens/s"]))
        same = "the same text every run" if result.identical else "the texts differ (sampling at temperature > 0?)"
        self.summary.setText(f"{result.verdict()} · {same}")
        self.race_finished.emit(result)

    def stop(self) -> None:
        """Stop the race: the run in progress ends as cancelled, the next one never starts."""
        if self.running:
            self._queue.clear()
            if self._handle is not None:
                self.client.cancel(self._handle)

    def closeEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        self.stop()
        super().closeEvent(event)
