"""The Preferences window (File → Preferences…, Ctrl+,), the per-conversation system prompt and
the text zoom, in the real window."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication

from desktop_app.engine import Engine
from desktop_app.engine.api import GenerateRequest
from desktop_app.store import History, Settings
from desktop_app.store.settings import BY_NAME, FONT_SIZE
from desktop_app.ui.preferences.preference_fields import NumberField, ThreadsField
from desktop_app.ui.preferences.preferences_dialog import PreferencesDialog
from desktop_app.ui.window.shortcut_list import window_shortcuts
from tests.ui.conftest import LOAD_TIMEOUT_MS
from tests.ui.helpers import send_and_wait


@pytest.fixture()
def window(qtbot: Any, home: Path) -> Iterator[Any]:
    """The real window without its engine: for what the dialog shows and saves."""
    from desktop_app.ui.main_window import MainWindow

    history = History()
    made = MainWindow(Settings.load(), history)
    qtbot.addWidget(made)
    made.show()
    made.activateWindow()
    yield made
    made.close()
    history.close()


def open_preferences(qtbot: Any, window: Any) -> PreferencesDialog:
    """File → Preferences…, as a user does (the menu action, whose shortcut is Ctrl+,)."""
    action = window.findChild(type(window.serve_action), "preferencesAction")
    assert QKeySequence("Ctrl+,") in action.shortcuts()
    action.trigger()
    dialog = window.preferences.dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def type_into(qtbot: Any, edit: Any, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    qtbot.keyClicks(edit, text)


def number_fields(dialog: PreferencesDialog) -> dict[str, NumberField]:
    fields = {}
    for name, field in dialog.fields.items():
        if isinstance(field, ThreadsField):
            field.measured.setChecked(False)
            field = field.count
        if isinstance(field, NumberField):
            fields[name] = field
    return fields


def test_every_number_field_takes_its_range_default_and_message_from_its_declaration(qtbot: Any, window: Any) -> None:
    dialog = open_preferences(qtbot, window)
    fields = number_fields(dialog)
    expected = {
        "temperature", "top_p", "top_k", "min_p", "repeat_penalty", "seed", "max_tokens", "n_ctx", "n_threads",
        "n_gpu_layers", "draft_n_gpu_layers", "draft_max", "font_size", "api_port", "prompt_cache_mb",
    }  # fmt: skip
    assert set(fields) == expected
    for name, field in fields.items():
        number = BY_NAME[name].number
        assert number is not None and field.number is number
        if name not in ("seed", "n_threads"):  # their empty box means "random", "measured"
            assert field.edit.placeholderText() == str(number.default).removesuffix(".0")
        too_high = str(number.high + 1)
        type_into(qtbot, field.edit, too_high)
        with pytest.raises(ValueError):
            number.parse(too_high)
        label = field.label.split(" (")[0]  # the form's words, not the parameter's name
        assert not field.error.isHidden() and field.error.text().startswith(f"{label}: enter "), name
        assert name not in field.error.text() and f"{number.high + 1}" not in field.error.text(), name
        assert not dialog.ok.isEnabled() and not dialog.apply_button.isEnabled()
        type_into(qtbot, field.edit, str(number.default))
        assert field.error.isHidden()
        assert dialog.ok.isEnabled()
    # the field's label and its range in plain words, as the user types
    dialog.show_section("Sampling")
    type_into(qtbot, fields["top_p"].edit, "1.5")
    assert fields["top_p"].error.text() == "Top-p: enter a number above 0, up to 1"
    assert not dialog.ok.isEnabled()
    type_into(qtbot, fields["top_p"].edit, "0")  # the open lower bound
    assert "above 0" in fields["top_p"].error.text() and not dialog.ok.isEnabled()
    type_into(qtbot, fields["top_k"].edit, "-1")
    assert fields["top_k"].error.text() == "Top-k: enter a whole number from 0 to 1,048,576"
    dialog.show_section("Model")
    type_into(qtbot, fields["n_ctx"].edit, "5")
    low, high = fields["n_ctx"].number.low, fields["n_ctx"].number.high
    assert fields["n_ctx"].error.text() == f"Context length: enter a whole number from {low:,} to {high:,}"
    dialog.reject()


def test_cancel_changes_nothing_and_focus_returns_to_the_message_box(qtbot: Any, window: Any, home: Path) -> None:
    saved = (home / "config" / "settings.json").read_text() if (home / "config" / "settings.json").exists() else None
    dialog = open_preferences(qtbot, window)
    type_into(qtbot, number_fields(dialog)["temperature"].edit, "1.3")
    dialog.fields["system_prompt"].set_value("Never used")
    dialog.buttons.rejected.emit()
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert window.settings["temperature"] == 0.0 and window.settings["system_prompt"] == ""
    assert window.side.temperature.value() == 0.0
    now = (home / "config" / "settings.json").read_text() if (home / "config" / "settings.json").exists() else None
    assert now == saved
    qtbot.waitUntil(lambda: window.focusWidget() is window.input)


def test_ok_saves_the_values_the_window_shows_and_the_next_request_uses(qtbot: Any, window: Any) -> None:
    dialog = open_preferences(qtbot, window)
    fields = number_fields(dialog)
    for name, text in {"temperature": "0.7", "top_p": "0.9", "top_k": "40", "min_p": "0.05"}.items():
        type_into(qtbot, fields[name].edit, text)
    type_into(qtbot, fields["repeat_penalty"].edit, "1.3")
    type_into(qtbot, fields["draft_max"].edit, "3")
    type_into(qtbot, fields["seed"].edit, "")  # empty: a new seed for every answer
    dialog.fields["drafter"].set_value("ngram")
    dialog.fields["spec_mode"].set_value("on")
    assert dialog.fields["drafter"].findData("none") < 0  # off is the Speculation field's, not a drafter
    dialog.ok.click()
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert window.side.temperature.value() == pytest.approx(0.7)
    assert window.side.draft_max.value() == 3
    assert window.answers.speculation.choice == "ngram" and window.side.always.isChecked()
    again = Settings.load()
    assert (again["temperature"], again["top_k"], again["repeat_penalty"], again["random_seed"]) == (0.7, 40, 1.3, True)
    sampling = window.answers.request_for([{"role": "user", "content": "hi"}]).sampling
    assert (sampling.temperature, sampling.top_p, sampling.top_k, sampling.min_p) == (0.7, 0.9, 40, 0.05)
    assert sampling.repeat_penalty == 1.3 and sampling.seed is None
    # the dialog opens again with what was saved
    dialog = open_preferences(qtbot, window)
    assert number_fields(dialog)["seed"].edit.text() == "" and number_fields(dialog)["top_k"].edit.text() == "40"
    dialog.reject()


def test_presets_fill_the_prompt_and_are_saved(qtbot: Any, window: Any) -> None:
    dialog = open_preferences(qtbot, window)
    prompt, presets = dialog.fields["system_prompt"], dialog.fields["prompt_presets"]
    prompt.set_value("Answer in one sentence.")
    qtbot.keyClicks(presets.name, "Terse")
    presets.save.click()
    prompt.set_value("")
    presets.list.itemClicked.emit(presets.list.item(0))
    assert prompt.value() == "Answer in one sentence."
    dialog.ok.click()
    assert Settings.load()["prompt_presets"] == {"Terse": "Answer in one sentence."}
    assert Settings.load()["system_prompt"] == "Answer in one sentence."


def test_the_dialog_fits_an_800_by_600_screen(qtbot: Any, window: Any) -> None:
    dialog = open_preferences(qtbot, window)
    for section in range(dialog.tabs.count()):
        dialog.tabs.setCurrentIndex(section)
        QApplication.processEvents()
        assert dialog.width() <= 800 and dialog.height() <= 560
        assert dialog.minimumSizeHint().width() <= 800 and dialog.minimumSizeHint().height() <= 560
    dialog.reject()


def test_zoom_keys_change_the_text_size_and_save_it(qtbot: Any, window: Any) -> None:
    listed = window_shortcuts(window)  # Help → Keyboard shortcuts
    for row in (("Ctrl+= / Ctrl++", "Larger text"), ("Ctrl+-", "Smaller text"), ("Ctrl+0", "Text size back to normal")):
        assert row in listed
    assert ("Ctrl+,", "Preferences") in listed
    size = FONT_SIZE.default
    assert window.chat_view.font().pointSize() == size == window.input.font().pointSize()
    message = window.chat_view.add_message("user", "Hello")
    qtbot.keyClick(window.input, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(window.input, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert window.input.font().pointSize() == size + 2 == message.body.font().pointSize()
    assert Settings.load()["font_size"] == size + 2
    qtbot.keyClick(window.input, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    assert window.chat_view.font().pointSize() == size + 1 == Settings.load()["font_size"]
    qtbot.keyClick(window.input, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    assert window.chat_view.font().pointSize() == size == Settings.load()["font_size"]
    # the same setting as Preferences → Appearance
    dialog = open_preferences(qtbot, window)
    type_into(qtbot, number_fields(dialog)["font_size"].edit, "16")
    dialog.ok.click()
    assert window.input.font().pointSize() == 16 == message.body.font().pointSize()


# ---------------------------------------------------------------------- with the engine
@pytest.fixture(scope="module")
def target_engine(models: Any) -> Iterator[Engine]:
    """The factory target in the test process: renders requests to prompt tokens."""
    engine = Engine()
    engine.load_target(models.target)
    yield engine
    engine.close()


def contains(tokens: list[int], part: list[int]) -> bool:
    return any(tokens[i : i + len(part)] == part for i in range(len(tokens) - len(part) + 1))


def test_system_prompts_reach_the_prompt_tokens(
    qtbot: Any, make_window: Any, models: Any, target_engine: Engine
) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=4)
    sent: list[GenerateRequest] = []
    window.client.generation_started.connect(lambda handle: sent.append(handle.request))

    def prompt_tokens() -> list[int]:
        return target_engine.build_prompt(sent[-1])[0]

    default, own = "You are a pirate named Zorblax.", "Reply only in French, please."
    default_tokens = target_engine.prompts.tokenize_text(default)
    own_tokens = target_engine.prompts.tokenize_text(own)
    # no prompt: the request starts with the user's message
    send_and_wait(qtbot, window, "Hello")
    assert sent[-1].messages is not None and sent[-1].messages[0]["role"] == "user"
    assert not contains(prompt_tokens(), default_tokens)
    # the default system prompt, set in Preferences → Chat
    dialog = open_preferences(qtbot, window)
    dialog.fields["system_prompt"].set_value(default)
    dialog.ok.click()
    send_and_wait(qtbot, window, "Who are you?")
    assert contains(prompt_tokens(), default_tokens)
    # this conversation's own prompt replaces it
    editor = window.prompt_button.edit()
    assert editor.use_default.isChecked() and editor.text.toPlainText() == default
    editor.use_default.setChecked(False)
    editor.text.setPlainText(own)
    editor.accept()
    assert window.history.option(window.session.conversation_id, "system_prompt") == own
    assert window.prompt_button.text() == "System prompt (own)…" and own in window.prompt_button.toolTip()
    send_and_wait(qtbot, window, "And now?")
    tokens = prompt_tokens()
    assert contains(tokens, own_tokens) and not contains(tokens, default_tokens)
    qtbot.waitUntil(lambda: window.focusWidget() is window.input)
    # a prompt chosen for a new conversation before its first message is kept with it
    window.conversations.new_requested.emit()
    editor = window.prompt_button.edit()
    editor.use_default.setChecked(False)
    editor.text.setPlainText("")
    editor.accept()
    send_and_wait(qtbot, window, "Fresh start")
    assert window.history.option(window.session.conversation_id, "system_prompt") == ""
    assert sent[-1].messages is not None and sent[-1].messages[0]["role"] == "user"
    assert not contains(prompt_tokens(), default_tokens)


def test_a_context_length_change_reloads_the_model_with_it(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target)
    dialog = open_preferences(qtbot, window)
    dialog.show_section("Model")
    threads = dialog.fields["n_threads"]
    assert isinstance(threads, ThreadsField)  # the window's tests run one fixed thread
    assert not threads.measured.isChecked() and threads.count.edit.text() == "1" and threads.value() == 1
    threads.measured.setChecked(True)
    assert not threads.count.isEnabled() and threads.value() == 0  # 0: measured, as N_THREADS says
    threads.measured.setChecked(False)
    type_into(qtbot, number_fields(dialog)["n_ctx"].edit, "2048")
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS) as loaded:
        dialog.apply_button.click()  # Apply: the dialog stays open, the reload starts at once
        assert window.client.last_load.target_options.n_ctx == 2048
    assert dialog.isVisible()
    assert "Reloading the model with a 2,048-token context…" in window.notices
    assert loaded.args[0].target.n_ctx == 2048
    assert Settings.load()["n_ctx"] == 2048
    dialog.ok.click()  # nothing more changed: no second load
    assert window.client.last_load.target_options.n_ctx == 2048
