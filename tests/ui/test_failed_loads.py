"""A model that does not load: the window shows what is really loaded (or nothing), forgets a file
that is not a model, and says why in a banner that stays until dismissed. Real window, real engine."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

from desktop_app.store import Settings
from desktop_app.ui.models.model_bar import CHOOSE_MODEL
from tests.ui.conftest import LOAD_TIMEOUT_MS
from tests.ui.helpers import send_and_wait


def _offered(box: Any) -> list[str]:
    return [str(box.itemData(i)) for i in range(box.count())]


def _enter_does_not_send(qtbot: Any, window: Any) -> None:
    window.input.setFocus()
    qtbot.keyClicks(window.input, "hello?")
    qtbot.keyClick(window.input, Qt.Key.Key_Return)
    qtbot.wait(200)
    assert window.chat_view.messages == [] and not window.session.busy
    assert window.input.toPlainText() == "hello?"  # kept for when a model is loaded


def test_a_text_file_named_gguf_is_dropped_and_the_old_model_still_answers(
    qtbot: Any, make_window: Any, models: Any
) -> None:
    window = make_window(target_path=models.target, max_tokens=8)
    bad = str(models.not_gguf)
    with qtbot.waitSignal(window.client.load_failed, timeout=LOAD_TIMEOUT_MS) as failed:
        window.model_bar.use_file(bad)  # "Open GGUF…": added to the recent files, then loaded
    assert failed.args[0].bad_file == bad
    bar = window.model_bar
    # the bar, the status bar and the settings name the model that is really loaded
    assert bar.target_path() == str(models.target) and bar.target_picker.currentText() == models.target.name
    assert bad not in _offered(bar.target_picker) and bad not in _offered(bar.draft_picker)
    assert bar.status.text() == f"Ready: {models.target.stem}"
    assert window.status.models.text().startswith(models.target.stem)
    saved = Settings.load()
    assert saved["target_path"] == str(models.target) and bad not in saved["recent_files"]  # not retried
    # the reason stays in a banner that names what still answers
    banner = window.load_banner
    assert banner.isVisible() and "not a GGUF model file" in banner.message.text()
    assert f"{models.target.stem} is still loaded" in banner.message.text()
    assert window.send_button.isEnabled()
    send_and_wait(qtbot, window, "Still there?")
    qtbot.wait(500)
    assert banner.isVisible()  # not a 15 s status-bar message
    qtbot.mouseClick(banner.dismiss, Qt.MouseButton.LeftButton)
    assert not banner.isVisible()


def test_a_failed_load_with_nothing_loaded_says_choose_a_model_and_disables_send(
    qtbot: Any, make_window: Any, models: Any
) -> None:
    bad = str(models.not_gguf)  # e.g. the last target, broken since
    window = make_window(wait_loaded=False, target_path=bad, recent_files=[bad])
    with qtbot.waitSignal(window.client.load_failed, timeout=LOAD_TIMEOUT_MS):
        pass
    bar = window.model_bar
    assert bar.target_picker.currentIndex() == -1 and bar.target_picker.placeholderText() == CHOOSE_MODEL
    assert bad not in _offered(bar.target_picker)
    assert window.status.models.text() == "no model loaded"
    assert "No model is loaded" in window.load_banner.message.text() and window.load_banner.isVisible()
    assert not window.send_button.isEnabled() and not window.side.race.isEnabled()
    _enter_does_not_send(qtbot, window)
    saved = Settings.load()
    assert saved["target_path"] == "" and saved["recent_files"] == []  # the next start loads the built-in model
    # choosing a model brings everything back
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS):
        window.model_bar.use_file(str(models.target))
    assert window.send_button.isEnabled() and not window.load_banner.isVisible()


def test_a_bad_worker_address_leaves_send_disabled(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, max_tokens=8)

    def fill_in() -> None:
        dialog = QApplication.activeModalWidget()
        assert dialog is not None
        dialog.workers.setText("127.0.0.1:9")  # nothing listens there
        dialog.accept()

    QTimer.singleShot(200, fill_in)
    with qtbot.waitSignal(window.client.load_failed, timeout=LOAD_TIMEOUT_MS) as failed:
        window.loader.edit_workers()
    assert "worker" in failed.args[0].message and failed.args[0].models is None
    assert failed.args[0].bad_file is None  # the file is fine: it stays offered
    assert not window.send_button.isEnabled()
    assert window.model_bar.target_picker.currentIndex() == -1
    assert window.status.models.text() == "no model loaded"
    assert "No model is loaded" in window.load_banner.message.text()
    assert str(models.target) in _offered(window.model_bar.target_picker)
    _enter_does_not_send(qtbot, window)
