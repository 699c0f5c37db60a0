"""The model bar: opening a GGUF file, recent files, GPU layers, drafter choice; copy to clipboard."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog

from desktop_app.engine_process.protocol import Load
from desktop_app.ui.conversations.chat_session import title_for
from desktop_app.ui.engine.engine_client import EngineClient
from desktop_app.ui.models.model_bar import OPEN_FILE
from tests.ui.conftest import LOAD_TIMEOUT_MS
from tests.ui.helpers import last_answer, pick, send_and_wait


def record_loads(monkeypatch: Any, client: EngineClient) -> list[Load]:
    """Every Load command the window sends to the engine process from now on (still sent).

    Sending happens in the call that asked for the load, so an empty list right after a user's
    action proves that it loaded nothing, with no waiting."""
    sent: list[Load] = []
    load = client.load

    def record(command: Load) -> None:
        sent.append(command)
        load(command)

    monkeypatch.setattr(client, "load", record)
    return sent


def test_open_gguf_loads_it_and_remembers_it(qtbot: Any, make_window: Any, models: Any, monkeypatch: Any) -> None:
    window = make_window()
    picker = window.model_bar.target_picker
    assert picker.objectName() == "targetPicker"
    assert picker.itemText(picker.count() - 1) == "Open GGUF…"
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(models.target), "GGUF models (*.gguf)"))
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS) as loaded:
        pick(picker, OPEN_FILE)
    assert loaded.args[0].target.name == "target"  # named by its file
    assert picker.currentText() == "target.gguf"
    assert window.settings["recent_files"] == [str(models.target)]
    assert window.settings["target_path"] == str(models.target)
    # the draft picker offers the recent file too; back to the built-in model from the list
    assert window.model_bar.draft_picker.findData(str(models.target)) >= 0
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS) as loaded:
        pick(picker, "")
    assert "135M" in loaded.args[0].target.name or "135m" in loaded.args[0].target.name.lower()


def test_loading_shows_a_percentage_rising_to_100_then_ready(qtbot: Any, make_window: Any, default_model: Any) -> None:
    window = make_window(wait_loaded=False)  # the built-in model, loading now
    bar, status = window.model_bar.progress, window.model_bar.status
    stages: list[str] = []
    fractions: list[float] = []
    shown: list[tuple[bool, int, int, str]] = []  # visible, maximum, value, status line

    def seen(stage: str, fraction: float) -> None:  # runs after the window's own slot
        stages.append(stage)
        fractions.append(fraction)
        shown.append((bar.isVisible(), bar.maximum(), bar.value(), status.text()))

    window.client.load_progress.connect(seen)
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS):
        pass
    assert set(stages) == {"target"}
    assert len(fractions) >= 2 and fractions[-1] == 1.0
    assert fractions == sorted(set(fractions))  # rising, no repeats
    assert {(visible, maximum) for visible, maximum, _value, _text in shown} == {(True, 100)}
    assert [value for _v, _m, value, _t in shown] == [round(f * 100) for f in fractions]
    assert [text for *_rest, text in shown] == [
        f"Loading target {default_model.name}… {round(f * 100)}%" for f in fractions
    ]
    assert not bar.isVisible()
    assert status.text().startswith("Ready")


def test_cancelling_open_gguf_keeps_the_loaded_model(
    qtbot: Any, make_window: Any, models: Any, monkeypatch: Any
) -> None:
    window = make_window(target_path=models.target)
    sent = record_loads(monkeypatch, window.client)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: ("", ""))
    with qtbot.assertNotEmitted(window.model_bar.load_requested), qtbot.assertNotEmitted(window.model_bar.file_opened):
        pick(window.model_bar.target_picker, OPEN_FILE)  # the dialog answers before pick() returns
    assert window.model_bar.target_picker.currentText() == "target.gguf"
    assert sent == [] and not window.client.loading
    assert window.settings["target_path"] == str(models.target) and window.settings["recent_files"] == []


def test_gpu_layers_reload_with_the_new_value_and_no_change_does_not(
    qtbot: Any, make_window: Any, models: Any, monkeypatch: Any
) -> None:
    window = make_window(target_path=models.target)
    sent = record_loads(monkeypatch, window.client)
    with qtbot.waitSignal(window.model_bar.load_requested, timeout=1000):  # the bar asks the window
        window.model_bar.target_gpu.editingFinished.emit()  # focus left the box, value unchanged
    assert sent == [] and not window.client.loading  # the window saw that nothing changed
    window.model_bar.target_gpu.setValue(0)
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS) as loaded:
        window.model_bar.target_gpu.editingFinished.emit()
    assert loaded.args[0].target.n_gpu_layers == 0
    assert [command.target_options.n_gpu_layers for command in sent] == [0]  # one load, the changed one
    assert window.settings["n_gpu_layers"] == 0


def test_speculation_off_answers_without_speculation(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="ngram", spec_mode="on", max_tokens=20)
    pick(window.side.mode, "off")
    assert window.settings["spec_mode"] == "off"
    send_and_wait(qtbot, window, "Hi")
    footer = last_answer(window).footer.text()
    assert footer.endswith("\nwithout speculation")
    # copy puts the answer on the clipboard
    qtbot.mouseClick(last_answer(window).copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == last_answer(window).text


def test_titles_are_one_clean_line() -> None:
    assert title_for("Here is code:\n```python\nx = 1\n```") == "Here is code: python x = 1"
    assert len(title_for("word " * 40)) <= 48
