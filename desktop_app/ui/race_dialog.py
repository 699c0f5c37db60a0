"""The speed race: the last prompt with speculation off, then on, side by side."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QGridLayout, QLabel, QPlainTextEdit, QVBoxLayout, QWidget,
)

from desktop_app.ui.chat_view import format_footer
from desktop_app.ui.engine_client import EngineClient

LANES = ("off", "on")


def speedup(off: dict[str, Any], on: dict[str, Any]) -> float:
    """How many times faster the speculative run decoded (tokens/s on / tokens/s off)."""
    slow, fast = off.get("decode_tokens_per_s") or 0.0, on.get("decode_tokens_per_s") or 0.0
    return fast / slow if slow > 0 else 0.0


class RaceDialog(QDialog):
    """Runs the race on the engine and shows it; non-modal, so the window stays usable.

    Signals:
        race_finished(dict): {"off": stats, "on": stats, "speedup": float, "identical": bool}.
        race_failed(str): a run failed or the engine went away.
    """

    race_finished = Signal(dict)
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
        self.results: dict[str, dict[str, Any]] = {}
        self.answers: dict[str, str] = {}
        self._queue: list[tuple[str, dict[str, Any]]] = []
        self._lane: str | None = None
        self._request: int | None = None
        self._messages: list[dict[str, str]] = []
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
        client.token_received.connect(self._on_token)
        client.finished.connect(self._on_finished)
        client.failed.connect(self._on_failed)
        client.engine_crashed.connect(self._on_failed)

    @property
    def running(self) -> bool:
        return self._lane is not None

    def start(self, messages: list[dict[str, str]], fields: dict[str, Any], drafter: str) -> None:
        """Race ``messages``: the same fields (seed, temperature, max tokens) with spec off, then on."""
        self._messages = messages
        self.results.clear()
        self.answers.clear()
        for lane in LANES:
            self.texts[lane].clear()
            self.stats_labels[lane].setText("waiting…")
        self.summary.setText("Running speculation off…")
        base = {k: v for k, v in fields.items() if k not in ("spec", "drafter")}
        self._queue = [("off", {**base, "spec": "off", "drafter": None}),
                       ("on", {**base, "spec": "on", "drafter": drafter})]
        self._next()

    def _next(self) -> None:
        if not self._queue:
            self._lane = self._request = None
            self._report()
            return
        self._lane, fields = self._queue.pop(0)
        self.summary.setText(f"Running speculation {self._lane}…")
        self._request = self.client.generate(self._messages, **fields)

    def _mine(self) -> bool:
        return self._request is not None and self.client.current_request == self._request

    @Slot(str, bool)
    def _on_token(self, text: str, from_draft: bool) -> None:
        if self._mine() and self._lane is not None:
            edit = self.texts[self._lane]
            edit.moveCursor(edit.textCursor().MoveOperation.End)
            edit.insertPlainText(text)

    @Slot(dict)
    def _on_finished(self, payload: dict[str, Any]) -> None:
        if self._lane is None or payload.get("id") != self._request:
            return
        self.results[self._lane] = payload["stats"]
        self.answers[self._lane] = payload["text"]
        self.texts[self._lane].setPlainText(payload["text"])
        self.stats_labels[self._lane].setText(format_footer(payload["stats"]))
        self._next()

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        if self._lane is None:
            return
        self._queue.clear()
        self._lane = self._request = None
        self.summary.setText(f"Race stopped: {message}")
        self.race_failed.emit(message)

    def _report(self) -> None:
        if set(self.results) != set(LANES):
            self.summary.setText("Race cancelled")
            return
        off, on = self.results["off"], self.results["on"]
        factor = speedup(off, on)
        identical = self.answers["off"] == self.answers["on"]
        same = "identical text" if identical else "the texts differ (sampling at temperature > 0?)"
        self.summary.setText(f"Speculation on: {factor:.2f}× the speed of off · {same}")
        self.race_finished.emit({"off": off, "on": on, "speedup": factor, "identical": identical})

    def closeEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        if self.running:
            self._queue.clear()
            self.client.cancel()
        super().closeEvent(event)
