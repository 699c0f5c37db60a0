"""Models → Workers…: which other computers hold part of the target, and in what proportions."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QWidget

from desktop_app.engine.api import WORKER_PORT, LayerSplit, ModelOptions, parse_workers
from desktop_app.ui.widgets.plain_text import plain_label


class WorkersDialog(QDialog):
    """Two fields, checked as the user types; OK only when both are valid together."""

    def __init__(self, workers: str, split: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Workers")
        self.workers = QLineEdit(workers)
        self.workers.setObjectName("workersEdit")
        self.workers.setPlaceholderText(f"e.g. 192.168.1.20:{WORKER_PORT.default}, 192.168.1.21")
        self.split = QLineEdit(split)
        self.split.setObjectName("workerSplitEdit")
        self.split.setPlaceholderText("equal shares; e.g. 1,2,2 (this computer first)")
        self.problem = plain_label()
        self.problem.setObjectName("workersProblem")
        self.problem.setWordWrap(True)
        help_text = QLabel(
            "Spread the target model over other computers running <code>specchat worker</code>; the draft "
            "stays here. Workers have no password: use them only on a network you trust."
        )
        help_text.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow(help_text)
        form.addRow("Workers:", self.workers)
        form.addRow("Layer split:", self.split)
        form.addRow(self.problem)
        form.addRow(self.buttons)
        self.workers.textChanged.connect(self._check)
        self.split.textChanged.connect(self._check)
        self._check()

    def _check(self) -> None:
        try:
            ModelOptions(workers=parse_workers(self.workers.text()), split=LayerSplit.parse(self.split.text()))
            problem = ""
        except ValueError as exc:
            problem = str(exc)
        self.problem.setText(problem)
        self.problem.setVisible(bool(problem))
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(not problem)
