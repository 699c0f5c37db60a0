"""The Preferences window (File → Preferences…, Ctrl+,): one tab per section, OK / Apply / Cancel.

It edits a copy of the settings' values: Cancel changes nothing; OK and Apply write the changed
ones and emit :attr:`PreferencesDialog.applied` with their names. OK and Apply are disabled while
any field holds a bad value (its message is shown under it).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop_app.store import Settings
from desktop_app.ui.preferences import preference_pages as pages
from desktop_app.ui.preferences.preference_pages import Field
from desktop_app.ui.tools.mcp_settings import tools_page

SECTIONS = ("Chat", "Sampling", "Model", "Speculation", "Appearance", "API", "Tools", "Folders")
SIZE = (640, 460)  # fits an 800x600 screen with the window's frame


class PreferencesDialog(QDialog):
    """Signals:
    applied(object): the names of the settings OK or Apply changed (a frozenset of str).
    """

    applied = Signal(object)

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("preferencesDialog")
        self.setWindowTitle("Preferences")
        self.settings = settings
        self.fields: dict[str, Field] = {}
        self.tabs = QTabWidget()
        self.tabs.setObjectName("preferenceSections")
        built = (
            pages.chat_page(self.fields),
            pages.sampling_page(self.fields),
            pages.model_page(self.fields),
            pages.speculation_page(self.fields),
            pages.appearance_page(self.fields),
            pages.api_page(self.fields),
            tools_page(self.fields),
            pages.folders_page(),
        )
        for title, page in zip(SECTIONS, built, strict=True):
            scroll = QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setWidget(page)
            self.tabs.addTab(scroll, title)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Apply
            | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.apply_button = self.buttons.button(QDialogButtonBox.StandardButton.Apply)
        self.buttons.accepted.connect(self._ok)
        self.buttons.rejected.connect(self.reject)
        self.apply_button.clicked.connect(self.apply)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.buttons)
        for field in self.fields.values():
            signal = getattr(field, "validity_changed", None)
            if signal is not None:
                signal.connect(self._update_buttons)
        self.show_values()
        self.resize(*SIZE)

    def show_section(self, title: str) -> None:
        self.tabs.setCurrentIndex(SECTIONS.index(title))

    def show_values(self) -> None:
        """Fill every field from the saved settings."""
        s = self.settings
        for name, field in self.fields.items():
            field.set_value(None if name == "seed" and s["random_seed"] else s[name])
        self._update_buttons()

    @property
    def valid(self) -> bool:
        return all(field.valid for field in self.fields.values())

    def values(self) -> dict[str, Any]:
        """What the fields hold, by setting name (only while :attr:`valid`)."""
        values = {name: field.value() for name, field in self.fields.items()}
        values["random_seed"] = values["seed"] is None
        if values["seed"] is None:
            values["seed"] = self.settings["seed"]  # kept for when the seed is fixed again
        return values

    def apply(self) -> frozenset[str]:
        """Write the changed values; returns (and emits) their names."""
        if not self.valid:
            return frozenset()
        values = self.values()
        changed = frozenset(name for name, value in values.items() if self.settings[name] != value)
        for name in changed:
            self.settings.set(name, values[name])
        if changed:
            self.applied.emit(changed)
        return changed

    def _ok(self) -> None:
        if self.valid:
            self.apply()
            self.accept()

    def _update_buttons(self) -> None:
        self.ok.setEnabled(self.valid)
        self.apply_button.setEnabled(self.valid)
