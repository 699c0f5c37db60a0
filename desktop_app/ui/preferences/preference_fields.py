"""The Preferences window's fields: each edits one declared setting and checks it as the user types.

A numeric field takes its range, default and message from the setting's :class:`NumberRange`
(declared in engine/api.py, or store/settings.py for the window's own numbers): a bad value shows
that declaration's own error text under the field, and the field reports itself invalid.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.engine.api import NumberRange
from desktop_app.store.settings import BY_NAME
from desktop_app.ui.transcript.drafter_tints import is_dark
from desktop_app.ui.widgets.plain_text import plain_label

ERROR_LIGHT, ERROR_DARK = "#c0392b", "#ff8a80"  # a bad value's message: red, readable on a light or a dark theme


def number_text(value: float) -> str:
    """A number as the user would type it (no trailing ``.0`` on whole floats)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def plain_problem(label: str, number: NumberRange[Any]) -> str:
    """What a bad value in the field labelled ``label`` says, in words: "Context length: enter a
    whole number from 128 to 1,048,576" (the engine's own message names the parameter, for experts)."""
    return f"{label.split(' (')[0]}: enter {number.in_words()}"


class NumberField(QWidget):
    """A line edit for one numeric setting, with its declaration's message under it while bad.

    ``empty_means``: what an empty box stands for, shown as its placeholder ("random" for the
    seed); without it an empty box is the declared default. Signals:
        validity_changed(): the text became valid or bad.
    """

    validity_changed = Signal()

    def __init__(self, name: str, empty_means: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        setting = BY_NAME[name]
        assert setting.number is not None, f"{name} is not a numeric setting"
        self.number = setting.number
        self.empty_means = empty_means
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.edit = QLineEdit()
        self.edit.setObjectName(name)
        self.edit.setAccessibleName(setting.description)
        self.edit.setPlaceholderText(empty_means or number_text(self.number.default))
        self.edit.setToolTip(
            f"{setting.description}: {self.number.bounds()}; "
            + (f"empty: {empty_means}" if empty_means else f"default {number_text(self.number.default)}")
        )
        self.error = plain_label()
        self.error.setObjectName(f"{name}Error")
        self.error.setWordWrap(True)
        self.error.setStyleSheet(f"color: {ERROR_DARK if is_dark(self.palette()) else ERROR_LIGHT};")
        self.error.hide()
        layout.addWidget(self.edit)
        layout.addWidget(self.error)
        self._problem: str | None = None
        self.label = setting.description  # the form's label, once placed (set_label)
        self.edit.textChanged.connect(self._check)

    def set_label(self, label: str) -> None:
        """The words the form shows for this field: its messages name the setting by them."""
        self.label = label
        self._check()

    @property
    def valid(self) -> bool:
        return self._problem is None

    def set_value(self, value: float | None) -> None:
        self.edit.setText("" if value is None else number_text(value))

    def value(self) -> Any:
        """The checked number; None for an empty box with ``empty_means``, else the default."""
        text = self.edit.text().strip()
        if not text:
            return None if self.empty_means else self.number.default
        return self.number.parse(text)

    def _check(self) -> None:
        was = self.valid
        text = self.edit.text().strip()
        try:
            if text:
                self.number.parse(text)
            self._problem = None
        except ValueError:
            self._problem = plain_problem(self.label, self.number)
        self.error.setText(self._problem or "")
        self.error.setVisible(self._problem is not None)
        if was != self.valid:
            self.validity_changed.emit()


class ThreadsField(QWidget):
    """The engine's CPU threads: measured automatically (0), or a fixed count."""

    validity_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.measured = QCheckBox("Measure the fastest count automatically")
        self.measured.setObjectName("threadsMeasured")
        self.count = NumberField("n_threads")
        self.count.edit.setPlaceholderText("a fixed count")
        layout.addWidget(self.measured)
        layout.addWidget(self.count)
        self.measured.toggled.connect(lambda on: self.count.setEnabled(not on))
        self.count.validity_changed.connect(self.validity_changed)
        self.measured.toggled.connect(lambda _on: self.validity_changed.emit())

    @property
    def valid(self) -> bool:
        return self.measured.isChecked() or self.count.valid

    def set_value(self, value: int) -> None:
        self.measured.setChecked(value == 0)
        self.count.setEnabled(value != 0)
        self.count.set_value(value or None)

    def value(self) -> int:
        return 0 if self.measured.isChecked() else int(self.count.value() or 0)


class ChoiceField(QComboBox):
    """One of a setting's declared choices, each shown with its label."""

    valid = True

    def __init__(self, name: str, labels: dict[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setAccessibleName(BY_NAME[name].description)
        for key in BY_NAME[name].choices or ():
            if key in labels:  # the choices offered (a setting may read more, from old files)
                self.addItem(labels[key], key)

    def set_value(self, key: str) -> None:
        self.setCurrentIndex(max(0, self.findData(key)))

    def value(self) -> str:
        return str(self.currentData())


class FolderRow(QWidget):
    """A folder's path with an Open button (the system's file manager)."""

    def __init__(self, name: str, folder: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.folder = folder
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.path = QLineEdit(str(folder))
        self.path.setObjectName(f"{name}Path")
        self.path.setReadOnly(True)
        self.open = QPushButton("Open")
        self.open.setObjectName(f"{name}Open")
        self.open.setAccessibleName(f"Open {folder}")
        self.open.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.folder))))
        layout.addWidget(self.path, 1)
        layout.addWidget(self.open)
