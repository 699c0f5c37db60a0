"""A conversation's own answer settings and the presets: the "Settings…" button beside the
message box and its editor.

A conversation can carry its own temperature, top-p, top-k, answer length and speculation mode,
stored with it as its ``answer_settings`` option (store/presets.py); without them the settings of
the side panel and Preferences apply. A preset (a named system prompt + sampling + speculation,
saved in ``presets.json``) picked here fills them and the conversation's system prompt. The
editor saves, renames and deletes presets. Settings chosen before a new conversation's first
message are kept and stored when the conversation is, as its system prompt is.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop_app.engine.api import MAX_TOKENS, TEMPERATURE, TOP_K, TOP_P, SpecMode
from desktop_app.store import History, Settings
from desktop_app.store.errors import DataDirError
from desktop_app.store.presets import OPTION, AnswerPreset, Presets, own_settings
from desktop_app.store.settings import NO_DRAFTER
from desktop_app.ui.composer.system_prompt import SystemPromptButton
from desktop_app.ui.conversations.chat_session import ChatSession
from desktop_app.ui.speed.answer_settings import AnswerSettings
from desktop_app.ui.widgets.plain_text import plain_tip

SPECULATION = (("Auto", SpecMode.AUTO), ("On", SpecMode.ON), ("Off", SpecMode.OFF))


def default_settings(settings: Settings) -> AnswerPreset:
    """What answers use without settings of their own (the side panel's and Preferences')."""
    spec = SpecMode.OFF if settings["drafter"] == NO_DRAFTER else SpecMode(settings["spec_mode"])
    return AnswerPreset(settings["temperature"], settings["top_p"], settings["top_k"], settings["max_tokens"], spec)


def _fraction(name: str, low: float, high: float) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setObjectName(name)
    box.setRange(low, high)
    box.setSingleStep(0.05)
    return box


def _whole(name: str, low: int, high: int) -> QSpinBox:
    box = QSpinBox()
    box.setObjectName(name)
    box.setRange(low, high)
    return box


class ConversationSettingsEditor(QDialog):
    """A preset picker (with Save as…, Rename…, Delete), "Use the default settings" and the fields."""

    def __init__(
        self, presets: Presets, own: AnswerPreset | None, default: AnswerPreset, prompt: str | None,
        parent: QWidget | None = None,
    ) -> None:  # fmt: skip
        super().__init__(parent)
        self.setObjectName("conversationSettingsEditor")
        self.setWindowTitle("Settings for this conversation")
        self.presets_store = presets
        self.prompt = prompt  # the conversation's system prompt, as a preset picked here sets it
        self.picked = False  # a preset was picked: its system prompt goes with it
        self.preset_box = QComboBox()
        self.preset_box.setObjectName("presetBox")
        self.preset_box.setAccessibleName("Preset")
        self.preset_box.activated.connect(lambda _i: self.use_preset(self.preset_box.currentData()))
        row = QHBoxLayout()
        row.addWidget(self.preset_box, 1)
        for text, name, act in (
            ("Save as preset…", "savePresetButton", lambda: self._ask("Save as preset", "Name:", "", self.save_as)),
            ("Rename…", "renamePresetButton", lambda: self._ask("Rename preset", "New name:", self._chosen(), self.rename)),
            ("Delete", "deletePresetButton", lambda: self.delete(self._chosen())),
        ):  # fmt: skip
            button = QPushButton(text)
            button.setObjectName(name)
            button.setToolTip("A preset keeps these settings with this conversation's system prompt")
            button.clicked.connect(act)
            row.addWidget(button)
        self.use_default = QCheckBox("Use the default settings (the speed panel's and Preferences')")
        self.use_default.setObjectName("useDefaultSettings")
        self.temperature = _fraction("presetTemperature", TEMPERATURE.low, TEMPERATURE.high)
        self.top_p = _fraction("presetTopP", 0.01, TOP_P.high)  # above 0: the range is open there
        self.top_k = _whole("presetTopK", TOP_K.low, TOP_K.high)
        self.max_tokens = _whole("presetMaxTokens", MAX_TOKENS.low, MAX_TOKENS.high)
        self.speculation = QComboBox()
        self.speculation.setObjectName("presetSpeculation")
        for text, mode in SPECULATION:
            self.speculation.addItem(text, mode.value)
        self.note = QLabel()
        self.note.setObjectName("presetNote")
        self.note.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Temperature", self.temperature)
        form.addRow("Top-p", self.top_p)
        form.addRow("Top-k (0: off)", self.top_k)
        form.addRow("Max tokens", self.max_tokens)
        form.addRow("Speculation", self.speculation)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.use_default)
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addWidget(buttons)
        self.use_default.toggled.connect(self._show_default)
        self._default = default
        self._fill(own or default)
        self.use_default.setChecked(own is None)
        self._show_default(own is None)
        self._list(own.name if own else "")

    def settings(self) -> AnswerPreset | None:
        """The conversation's own settings as chosen; None: the defaults."""
        if self.use_default.isChecked():
            return None
        return self._fields(self._chosen())

    def _fields(self, name: str = "") -> AnswerPreset:
        return AnswerPreset(
            temperature=round(self.temperature.value(), 4),
            top_p=round(self.top_p.value(), 4),
            top_k=self.top_k.value(),
            max_tokens=self.max_tokens.value(),
            spec_mode=SpecMode(self.speculation.currentData()),
            name=name,
        )

    def use_preset(self, name: object) -> None:
        """Fill the fields (and the system prompt) from the preset ``name`` ("" or None: none)."""
        preset = self.presets_store.presets.get(name) if isinstance(name, str) else None
        if preset is None:
            return
        self.use_default.setChecked(False)
        self._fill(preset)
        self.prompt, self.picked = preset.system_prompt, True
        self._list(preset.name)

    def save_as(self, name: str) -> bool:
        """Save the fields and the conversation's system prompt as a new preset ``name``."""
        base = self._default if self.use_default.isChecked() else self._fields()
        try:
            name = self.presets_store.add(name, replace(base, system_prompt=self.prompt))
        except (ValueError, DataDirError) as exc:
            return self._say(str(exc))
        return self._saved(name, f"Saved as {name!r}")

    def rename(self, new: str) -> bool:
        old = self._chosen()
        if not old:
            return self._say("Pick a preset to rename first")
        try:
            new = self.presets_store.rename(old, new)
        except (ValueError, DataDirError) as exc:
            return self._say(str(exc))
        return self._saved(new, f"Renamed {old!r} to {new!r}")

    def delete(self, name: str) -> bool:
        if not name:
            return self._say("Pick a preset to delete first")
        try:
            self.presets_store.delete(name)
        except DataDirError as exc:
            return self._say(str(exc))
        return self._saved("", f"Deleted {name!r} (conversations using it keep its settings)")

    def _saved(self, name: str, said: str) -> bool:
        self._list(name)
        self._say(said)
        return True

    def _say(self, text: str) -> bool:
        self.note.setText(text)
        return False

    def _chosen(self) -> str:
        data = self.preset_box.currentData()
        return data if isinstance(data, str) else ""

    def _ask(self, title: str, label: str, text: str, then: Callable[[str], bool]) -> None:
        name, ok = QInputDialog.getText(self, title, label, text=text)
        if ok:
            then(name)

    def _list(self, current: str) -> None:
        self.preset_box.clear()
        self.preset_box.addItem("No preset", "")
        for name in self.presets_store.names():
            self.preset_box.addItem(name, name)
        self.preset_box.setCurrentIndex(max(self.preset_box.findData(current), 0))

    def _fill(self, preset: AnswerPreset) -> None:
        self.temperature.setValue(preset.temperature)
        self.top_p.setValue(preset.top_p)
        self.top_k.setValue(preset.top_k)
        self.max_tokens.setValue(preset.max_tokens)
        self.speculation.setCurrentIndex(max(self.speculation.findData(preset.spec_mode.value), 0))

    def _show_default(self, on: bool) -> None:
        for field in (self.temperature, self.top_p, self.top_k, self.max_tokens, self.speculation):
            field.setEnabled(not on)
        if on:
            self._fill(self._default)


class ConversationSettingsButton(QPushButton):
    """Opens the editor for the open conversation; its text names the conversation's preset (or
    says it has settings of its own). ``own()`` is what the next answer uses (None: the defaults).
    A presets file that had to be set aside is said through ``tell``."""

    def __init__(
        self, settings: Settings, history: History, prompt_button: SystemPromptButton, tell: Callable[[str], None],
        parent: QWidget | None = None,
    ) -> None:  # fmt: skip
        super().__init__("Settings…", parent)
        self.setObjectName("conversationSettingsButton")
        self.setAccessibleName("Answer settings and preset of this conversation")
        self.settings = settings
        self.history = history
        self.presets = Presets.load()
        self._prompt_button = prompt_button
        self.conversation_id = 0
        self.pending: list[AnswerPreset | None] = []  # chosen for a conversation not stored yet
        self.editor: ConversationSettingsEditor | None = None
        self.clicked.connect(self.edit)
        if (problem := self.presets.problem) is not None:
            QTimer.singleShot(0, lambda: tell(problem))  # once the window is built
        self._show()

    def follow(self, session: ChatSession, answers: AnswerSettings) -> None:
        """Follow the open conversation; its answers use :meth:`own`."""
        session.conversation_changed.connect(self.set_conversation)
        answers.own = self.own

    def own(self) -> AnswerPreset | None:
        if not self.conversation_id:
            return self.pending[0] if self.pending else None
        try:
            return own_settings(self.history.option(self.conversation_id, OPTION))
        except sqlite3.Error:
            return None  # an unreadable history: the defaults

    def set_conversation(self, conversation_id: int) -> None:
        """The open conversation changed (0: a new one). A new conversation just stored (no
        messages yet) takes the settings chosen before it was."""
        if conversation_id and self.pending and not self.history.has_messages(conversation_id):
            self._store(conversation_id, self.pending[0])
        self.pending = []
        self.conversation_id = conversation_id
        self._show()

    def edit(self) -> ConversationSettingsEditor:
        prompt = self._prompt_button.prompt()
        editor = ConversationSettingsEditor(
            self.presets, self.own(), default_settings(self.settings), prompt, self.window()
        )
        editor.accepted.connect(lambda: self.choose(editor.settings(), editor.prompt if editor.picked else prompt))
        editor.finished.connect(lambda _result: self._show())
        self.editor = editor
        editor.open()
        return editor

    def choose(self, own: AnswerPreset | None, prompt: str | None) -> None:
        """Give the open conversation (or the next new one) these settings and system prompt."""
        if prompt != self._prompt_button.prompt():
            self._prompt_button.set_prompt(prompt)
        if self.conversation_id:
            self._store(self.conversation_id, own)
        else:
            self.pending = [own]
        self._show()

    def _store(self, conversation_id: int, own: AnswerPreset | None) -> None:
        try:
            self.history.set_option(conversation_id, OPTION, None if own is None else own.option())
        except sqlite3.Error:
            pass  # said by the history's own checks; this answer uses the defaults

    def _show(self) -> None:
        own = self.own()
        if own is None:
            self.setText("Settings…")
            self.setToolTip("Answer settings: the defaults (the speed panel's and Preferences')")
            return
        self.setText(f"Preset: {own.name}…" if own.name else "Settings (own)…")
        spec = own.spec_mode.value
        self.setToolTip(
            plain_tip(
                f"This conversation's own settings{f' (preset {own.name})' if own.name else ''}:\n"
                f"temperature {own.temperature:g}, top-p {own.top_p:g}, top-k {own.top_k}, "
                f"max tokens {own.max_tokens:,}, speculation {spec}"
            )
        )
