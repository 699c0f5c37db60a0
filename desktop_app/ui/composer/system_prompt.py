"""A conversation's own system prompt: the "System prompt…" button beside the message box and its editor.

Stored with the conversation as its ``system_prompt`` option (None: the default prompt from the
Preferences window applies). A prompt chosen before a new conversation's first message is kept
and stored when the conversation is.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.store import History, Settings
from desktop_app.ui.widgets.plain_text import plain_tip

OPTION = "system_prompt"


def conversation_prompt(history: History, conversation_id: int | None) -> str | None:
    """The conversation's own system prompt; None when it uses the default."""
    if not conversation_id:
        return None
    value = history.option(conversation_id, OPTION)
    return value if isinstance(value, str) else None


class SystemPromptEditor(QDialog):
    """A preset picker, the prompt's text and "Use the default system prompt"."""

    def __init__(self, settings: Settings, prompt: str | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("systemPromptEditor")
        self.setWindowTitle("System prompt for this conversation")
        self._default = settings["system_prompt"]
        self.presets = QComboBox()
        self.presets.setObjectName("systemPromptPreset")
        self.presets.setAccessibleName("Fill the prompt with a saved one")
        self.presets.addItem("Saved prompts…", None)
        for name, text in sorted(settings["prompt_presets"].items()):
            self.presets.addItem(name, text)
        self.use_default = QCheckBox("Use the default system prompt (Preferences → Chat)")
        self.use_default.setObjectName("useDefaultPrompt")
        self.text = QPlainTextEdit()
        self.text.setObjectName("systemPromptText")
        self.text.setAccessibleName("System prompt")
        self.text.setPlaceholderText("No system prompt")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.presets)
        layout.addWidget(self.use_default)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        self.presets.activated.connect(self._use_preset)
        self.use_default.toggled.connect(self._show_default)
        self.use_default.setChecked(prompt is None)
        self._show_default(prompt is None)
        if prompt is not None:
            self.text.setPlainText(prompt)
        self.resize(480, 320)

    def prompt(self) -> str | None:
        """The conversation's prompt as chosen; None: the default."""
        return None if self.use_default.isChecked() else self.text.toPlainText()

    def _use_preset(self, index: int) -> None:
        text = self.presets.itemData(index)
        if isinstance(text, str):
            self.use_default.setChecked(False)
            self.text.setPlainText(text)

    def _show_default(self, on: bool) -> None:
        self.text.setReadOnly(on)
        if on:
            self.text.setPlainText(self._default)


class SystemPromptButton(QPushButton):
    """Opens the editor for the open conversation; its text says whether it has its own prompt.
    Focus returns to ``message_box`` when the editor closes."""

    def __init__(
        self, settings: Settings, history: History, message_box: QWidget, parent: QWidget | None = None
    ) -> None:
        super().__init__("System prompt…", parent)
        self.setObjectName("systemPromptButton")
        self.setAccessibleName("System prompt of this conversation")
        self.settings = settings
        self.history = history
        self._message_box = message_box
        self.conversation_id = 0
        self.pending: list[str | None] = []  # [the prompt] chosen for a conversation not stored yet
        self.editor: SystemPromptEditor | None = None
        self.clicked.connect(self.edit)
        self._show()

    def prompt(self) -> str | None:
        if not self.conversation_id:
            return self.pending[0] if self.pending else None
        return conversation_prompt(self.history, self.conversation_id)

    def set_conversation(self, conversation_id: int) -> None:
        """The open conversation changed (0: a new one). A new conversation just stored (no
        messages yet) takes the prompt chosen before it was."""
        if conversation_id and self.pending and not self.history.has_messages(conversation_id):
            self.history.set_option(conversation_id, OPTION, self.pending[0])
        self.pending = []
        self.conversation_id = conversation_id
        self._show()

    def edit(self) -> SystemPromptEditor:
        editor = SystemPromptEditor(self.settings, self.prompt(), self.window())
        editor.accepted.connect(lambda: self.set_prompt(editor.prompt()))
        editor.finished.connect(lambda _result: self._message_box.setFocus())
        self.editor = editor
        editor.open()
        return editor

    def set_prompt(self, prompt: str | None) -> None:
        """Give the open conversation (or the next new one) ``prompt``; None: the default."""
        if self.conversation_id:
            self.history.set_option(self.conversation_id, OPTION, prompt)
        else:
            self.pending = [prompt]
        self._show()

    def _show(self) -> None:
        own = self.prompt()
        self.setText("System prompt…" if own is None else "System prompt (own)…")
        shown = self.settings["system_prompt"] if own is None else own
        label = "the default" if own is None else "this conversation's own"
        self.setToolTip(plain_tip(f"System prompt: {label}\n{shown or '(none)'}"))
