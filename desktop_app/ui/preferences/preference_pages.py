"""The Preferences window's sections: each lays out its fields, labelled in words, and adds them
to the dialog's ``fields`` (setting name -> field)."""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.engine.api import DrafterKind, SpecMode
from desktop_app.paths import data_dir, models_dir
from desktop_app.store.settings import BEST_DRAFTER, BY_NAME, MAX_TEXT_CHARS
from desktop_app.ui.preferences.preference_fields import ChoiceField, FolderRow, NumberField, ThreadsField
from desktop_app.ui.preferences.theme import THEME_LABELS

# The drafter under the side panel's one speculation control (ui/speed/speculation_choice.py): the best
# available, or one drafter; "none" is only read from old settings files (speculation off).
DRAFTER_LABELS = {BEST_DRAFTER: "The best drafter available", **{k.value: k.label for k in DrafterKind}}
SPEC_LABELS = {m.value: m.label for m in SpecMode}
# What a change to these settings needs: the models loaded again.
RELOADING = frozenset({"n_ctx", "n_threads", "n_gpu_layers", "draft_n_gpu_layers", "prompt_cache_mb"})


class Field(Protocol):
    """What the dialog asks of every field."""

    @property
    def valid(self) -> bool: ...

    def value(self) -> Any: ...

    def set_value(self, value: Any) -> None: ...


class TextField(QLineEdit):
    valid = True

    def __init__(self, name: str) -> None:
        super().__init__()
        self.setObjectName(name)
        self.setAccessibleName(BY_NAME[name].description)
        self.setToolTip(BY_NAME[name].description)

    def value(self) -> str:
        return self.text().strip()

    def set_value(self, value: str) -> None:
        self.setText(value)


class PromptField(QPlainTextEdit):
    """A system prompt's text: valid up to MAX_TEXT_CHARS characters (a longer one cannot be saved)."""

    validity_changed = Signal()

    def __init__(self, name: str) -> None:
        super().__init__()
        self.setObjectName(name)
        self.setAccessibleName("System prompt")
        self.setPlaceholderText("e.g. You are a helpful assistant. Answer briefly.")
        self._valid = True
        self.textChanged.connect(self._check)

    @property
    def valid(self) -> bool:
        return self._valid

    def _check(self) -> None:
        valid = self.document().characterCount() - 1 <= MAX_TEXT_CHARS  # counted by Qt, not copied out
        if valid != self._valid:
            self._valid = valid
            self.setToolTip("" if valid else f"A system prompt holds {MAX_TEXT_CHARS:,} characters at most")
            self.validity_changed.emit()

    def value(self) -> str:
        return self.toPlainText()

    def set_value(self, value: str) -> None:
        self.setPlainText(value)


class Presets(QWidget):
    """Saved system prompts (name -> text): save the prompt under a name, remove one, or click
    one to fill the prompt with it."""

    changed = Signal()
    valid = True

    def __init__(self, prompt: PromptField) -> None:
        super().__init__()
        self._prompt = prompt
        self._presets: dict[str, str] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.list = QListWidget()
        self.list.setObjectName("presetList")
        self.list.setAccessibleName("Saved system prompts: click one to use it")
        self.list.setMaximumHeight(110)
        self.name = QLineEdit()
        self.name.setObjectName("presetName")
        self.name.setPlaceholderText("Name for the prompt above")
        self.save = QPushButton("Save as preset")
        self.save.setObjectName("savePreset")
        self.remove = QPushButton("Remove")
        self.remove.setObjectName("removePreset")
        row = QHBoxLayout()
        row.addWidget(self.name, 1)
        row.addWidget(self.save)
        row.addWidget(self.remove)
        layout.addWidget(self.list)
        layout.addLayout(row)
        self.save.clicked.connect(self._save)
        self.remove.clicked.connect(self._remove)
        self.list.itemClicked.connect(lambda item: self._use(item.text()))

    def value(self) -> dict[str, str]:
        return dict(self._presets)

    def set_value(self, presets: dict[str, str]) -> None:
        self._presets = dict(presets)
        self._show()

    def _show(self) -> None:
        self.list.clear()
        self.list.addItems(sorted(self._presets))

    def _save(self) -> None:
        name = self.name.text().strip()
        if name and self._prompt.valid and self._prompt.value().strip():  # a prompt past the limit is not kept
            self._presets[name] = self._prompt.value()
            self._show()
            self.name.clear()

    def _remove(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self._presets.pop(item.text(), None)
            self._show()

    def _use(self, name: str) -> None:
        self._prompt.set_value(self._presets[name])
        self.name.setText(name)


def _form(fields: dict[str, Field], rows: list[tuple[str, str, QWidget]], note: str = "") -> QWidget:
    page = QWidget()
    form = QFormLayout(page)
    for label, name, widget in rows:
        form.addRow(label, widget)
        for number in [widget, *widget.findChildren(NumberField)]:
            if isinstance(number, NumberField):
                number.set_label(label)  # its messages say the label the user reads
        fields[name] = widget  # type: ignore[assignment]  # every widget here is a Field
    if note:
        hint = QLabel(note)
        hint.setWordWrap(True)
        form.addRow(hint)
    return page


def chat_page(fields: dict[str, Field]) -> QWidget:
    prompt = PromptField("system_prompt")
    presets = Presets(prompt)
    fields["system_prompt"] = prompt
    fields["prompt_presets"] = presets
    page = QWidget()
    layout = QVBoxLayout(page)
    layout.addWidget(QLabel("Default system prompt (for conversations without their own):"))
    layout.addWidget(prompt, 1)
    layout.addWidget(QLabel("Saved prompts:"))
    layout.addWidget(presets)
    return page


def sampling_page(fields: dict[str, Field]) -> QWidget:
    return _form(
        fields,
        [
            ("Temperature (0 = always the likeliest)", "temperature", NumberField("temperature")),
            ("Top-p (1 = off)", "top_p", NumberField("top_p")),
            ("Top-k (0 = off)", "top_k", NumberField("top_k")),
            ("Min-p (0 = off)", "min_p", NumberField("min_p")),
            ("Repeat penalty (1 = off)", "repeat_penalty", NumberField("repeat_penalty")),
            ("Seed (empty = random)", "seed", NumberField("seed", empty_means="random")),
            ("Longest answer (tokens)", "max_tokens", NumberField("max_tokens")),
        ],
    )


def model_page(fields: dict[str, Field]) -> QWidget:
    return _form(
        fields,
        [
            ("Context length (tokens)", "n_ctx", NumberField("n_ctx")),
            ("Prompt cache (MiB per model, 0 = off)", "prompt_cache_mb", NumberField("prompt_cache_mb")),
            ("CPU threads", "n_threads", ThreadsField()),
            ("Target layers on the GPU (-1 = all)", "n_gpu_layers", NumberField("n_gpu_layers")),
            ("Draft layers on the GPU (-1 = all)", "draft_n_gpu_layers", NumberField("draft_n_gpu_layers")),
        ],
        "Applying a change here loads the models again.",
    )


def speculation_page(fields: dict[str, Field]) -> QWidget:
    spec_mode = ChoiceField("spec_mode", SPEC_LABELS)
    spec_mode.setToolTip(" ".join(f"{m.label}: {m.description}." for m in SpecMode))
    return _form(
        fields,
        [
            ("Speculation", "spec_mode", spec_mode),
            ("Drafter", "drafter", ChoiceField("drafter", DRAFTER_LABELS)),
            ("Tokens guessed at a time", "draft_max", NumberField("draft_max")),
        ],
    )


def appearance_page(fields: dict[str, Field]) -> QWidget:
    return _form(
        fields,
        [
            ("Text size (points)", "font_size", NumberField("font_size")),
            ("Theme", "theme", ChoiceField("theme", THEME_LABELS)),
        ],
        "In the window, Ctrl+= and Ctrl+- make the text larger and smaller, Ctrl+0 resets it. "
        "System follows the desktop's light or dark colours as they change.",
    )


def api_page(fields: dict[str, Field]) -> QWidget:
    return _form(
        fields,
        [
            ("Port", "api_port", NumberField("api_port")),
            ("Key (empty = none)", "api_key", TextField("api_key")),
        ],
        "Models → Serve API starts the OpenAI-compatible API on localhost with these.",
    )


def folders_page() -> QWidget:
    page = QWidget()
    form = QFormLayout(page)
    form.addRow("Data folder", FolderRow("dataFolder", data_dir()))
    form.addRow("Models folder", FolderRow("modelsFolder", models_dir()))
    return page
