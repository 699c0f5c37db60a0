"""A conversation's own answer settings and presets: each conversation answers with its own
temperature, length and speculation (and a preset's system prompt), switching conversations
switches them, and both survive a restart; presets are saved, picked, renamed and deleted."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from desktop_app.engine.api import GenerateRequest, SpecMode
from desktop_app.store.presets import PRESETS_FILE, Presets
from tests.ui.helpers import next_answer, type_and_send


def _ask(qtbot: Any, window: Any, text: str) -> tuple[GenerateRequest, int]:
    """Send ``text``; the request the engine got and the answer's length in tokens."""
    with next_answer(qtbot, window.client) as watch:
        type_and_send(qtbot, window, text)
    qtbot.waitUntil(lambda: not window.session.busy, timeout=5000)
    assert watch.done is not None and watch.handle is not None, watch.failure
    return watch.handle.request, watch.done.stats.generated_tokens


def _first(request: GenerateRequest) -> str:
    """The text of the request's first message (its system prompt, when it has one)."""
    assert request.messages
    return str(request.messages[0]["content"])


def _choose(window: Any, temperature: float, max_tokens: int, spec: SpecMode, save_as: str = "") -> Any:
    editor = window.settings_button.edit()
    editor.use_default.setChecked(False)
    editor.temperature.setValue(temperature)
    editor.max_tokens.setValue(max_tokens)
    editor.speculation.setCurrentIndex(editor.speculation.findData(spec.value))
    if save_as:
        assert editor.save_as(save_as), editor.note.text()
    return editor


def test_each_conversation_answers_with_its_own_preset_and_keeps_it_after_a_restart(
    qtbot: Any, make_window: Any, models: Any, home: Path
) -> None:
    window = make_window(target_path=models.target, max_tokens=40, temperature=0.0)
    window.prompt_button.set_prompt("Answer briefly.")  # this new conversation's own prompt
    editor = _choose(window, 0.7, 5, SpecMode.OFF, save_as="Brief")
    if folder := os.environ.get("SPECCHAT_SHOTS"):
        editor.grab().save(str(Path(folder) / "conversation-settings.png"))
    editor.accept()
    assert window.settings_button.text() == "Preset: Brief…"
    request, tokens = _ask(qtbot, window, "Tell me about the moon.")
    first = window.session.conversation_id
    assert (request.sampling.temperature, request.max_tokens, request.spec) == (0.7, 5, SpecMode.OFF)
    assert _first(request) == "Answer briefly." and tokens <= 5

    window.session.open(None)
    assert window.settings_button.text() == "Settings…"  # a new conversation: the defaults
    _choose(window, 0.0, 9, SpecMode.AUTO, save_as="Steady").accept()
    request, tokens = _ask(qtbot, window, "Tell me about the sea.")
    second = window.session.conversation_id
    assert (request.sampling.temperature, request.max_tokens, request.spec) == (0.0, 9, SpecMode.AUTO)
    assert tokens <= 9

    window.session.open(None)  # a third picks the saved preset "Brief": its prompt comes with it
    editor = window.settings_button.edit()
    editor.use_preset("Brief")
    editor.accept()
    request, _ = _ask(qtbot, window, "And the stars?")
    assert _first(request) == "Answer briefly." and request.max_tokens == 5

    window.session.open(second)  # switching conversations switches the settings
    assert window.settings_button.text() == "Preset: Steady…"
    request, _ = _ask(qtbot, window, "More, please.")
    assert (request.sampling.temperature, request.max_tokens) == (0.0, 9)
    window.session.open(None)
    request, _ = _ask(qtbot, window, "Hello")  # no settings of its own: the side panel's
    assert (request.sampling.temperature, request.max_tokens) == (0.0, 40)
    window.close()

    path = home / "config" / PRESETS_FILE
    data = json.loads(path.read_text())
    assert data["Brief"]["system_prompt"] == "Answer briefly." and data["Steady"]["max_tokens"] == 9
    data["Hot"] = {**data["Brief"], "temperature": 9}  # edited by hand, past the engine's range
    path.write_text(json.dumps(data))

    window = make_window(target_path=models.target, max_tokens=40, temperature=0.0)  # a restart
    assert any(
        "presets file had a problem" in n and "temperature must be between 0.0 and 5.0" in n for n in window.notices
    )
    assert window.settings_button.presets.names() == ["Brief", "Steady"]  # the usable ones are kept
    assert list(path.parent.glob(f"{PRESETS_FILE}.broken-*"))  # and the file as it was, set aside
    window.session.open(first)
    assert window.settings_button.text() == "Preset: Brief…"
    request, _ = _ask(qtbot, window, "Once more.")
    assert (request.sampling.temperature, request.max_tokens) == (0.7, 5)
    assert _first(request) == "Answer briefly."

    editor = window.settings_button.edit()
    editor.preset_box.setCurrentIndex(editor.preset_box.findData("Steady"))
    assert editor.rename("Calm") and editor.delete("Brief")
    assert [editor.preset_box.itemText(i) for i in range(editor.preset_box.count())] == ["No preset", "Calm"]
    editor.reject()
    assert Presets.load(path).names() == ["Calm"]
    assert window.settings_button.text() == "Preset: Brief…"  # the conversation keeps what it had
    if folder := os.environ.get("SPECCHAT_SHOTS"):
        window.grab().save(str(Path(folder) / "conversation-preset-window.png"))
