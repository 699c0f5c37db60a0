"""The window fits a small screen and keeps the keyboard in the message box. Real window, real
engine; Qt's offscreen screen is 800 px wide (a "narrow screen")."""

from __future__ import annotations

import shutil
from typing import Any

from PySide6.QtCore import QPoint, QPointF, QRect, Qt, QTimer
from PySide6.QtGui import QAction, QWheelEvent
from PySide6.QtWidgets import QApplication, QDialog, QWidget

from desktop_app.store import Settings
from tests.ui.conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS
from tests.ui.helpers import send_and_wait


def _inside(widget: QWidget, window: QWidget) -> bool:
    """Shown, with a real size, and wholly inside the window's rectangle."""
    rect = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
    return widget.isVisible() and widget.width() > 10 and widget.height() > 10 and window.rect().contains(rect)


def _screen(window: QWidget) -> QRect:
    return window.screen().availableGeometry()


def test_the_window_is_usable_at_800x600(qtbot: Any, make_window: Any, models: Any, tmp_path: Any) -> None:
    long_name = tmp_path / f"{'a-model-with-a-very-long-descriptive-file-name-' * 3}Q8_0.gguf"
    shutil.copy(models.target, long_name)
    window = make_window(target_path=long_name)
    hint = window.minimumSizeHint()
    assert hint.width() <= 800 and hint.height() <= 600, hint
    window.resize(800, 600)
    qtbot.waitUntil(lambda: window.width() == 800 and window.height() == 600)
    for part in (window.send_button, window.stop_button, window.input, window.model_bar.target_picker):
        assert _inside(part, window), part.objectName()
    # a narrow screen: the speed panel starts folded, one click away
    gauge = window.side.gauge
    assert not gauge.isVisible() and window.settings["side_panel"] == "auto"
    qtbot.mouseClick(window.side_fold.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: gauge.isVisible())
    qtbot.waitUntil(lambda: _inside(gauge, window), timeout=2000)  # once laid out
    assert window.width() <= 800 and window.height() <= 600
    for part in (window.send_button, window.input):
        assert _inside(part, window), part.objectName()
    assert Settings.load()["side_panel"] == "shown"  # remembered
    # a long model name never pushes the window past the screen
    assert _screen(window).contains(window.frameGeometry())


def test_the_window_never_grows_past_the_screen(qtbot: Any, make_window: Any) -> None:
    too_big = QWidget()
    too_big.setGeometry(2500, 1800, 3000, 2000)  # saved on a larger screen
    saved = bytes(too_big.saveGeometry().toBase64().data()).decode("ascii")
    window = make_window(window_geometry=saved, side_panel="shown")
    screen = _screen(window)
    assert screen.contains(window.frameGeometry()), (window.frameGeometry(), screen)
    window.resize(screen.width() + 400, screen.height() + 300)  # e.g. a layout asking for more
    qtbot.waitUntil(lambda: screen.contains(window.frameGeometry()), timeout=2000)


def test_a_saved_geometry_that_fits_is_restored(qtbot: Any, make_window: Any) -> None:
    fitting = QWidget()
    fitting.setGeometry(40, 30, 700, 500)
    saved = bytes(fitting.saveGeometry().toBase64().data()).decode("ascii")
    window = make_window(window_geometry=saved)
    assert (window.width(), window.height()) == (700, 500)


def _focused() -> QWidget | None:
    return QApplication.focusWidget()


def _wheel(widget: QWidget) -> None:
    centre = QPointF(widget.width() / 2, widget.height() / 2)
    event = QWheelEvent(
        centre,
        widget.mapToGlobal(centre),
        QPoint(0, 0),
        QPoint(0, 120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)


def test_focus_starts_in_the_message_box_and_stray_keys_change_no_setting(
    qtbot: Any, make_window: Any, models: Any
) -> None:
    window = make_window(target_path=models.target, side_panel="shown", draft_max=4)
    qtbot.waitUntil(lambda: _focused() is window.input)
    qtbot.keyClicks(_focused(), "12")
    assert window.input.toPlainText() == "12"
    assert window.model_bar.target_gpu.value() == window.settings["n_gpu_layers"]
    # a load disables the picker the user clicked: the keyboard comes back to the message box
    window.model_bar.target_picker.setFocus(Qt.FocusReason.MouseFocusReason)
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS):
        window.model_bar.draft_gpu.setValue(3)
        window.model_bar.draft_gpu.editingFinished.emit()
        qtbot.waitUntil(lambda: _focused() is window.input, timeout=2000)
    # the wheel over a spin box the user did not focus changes nothing
    _wheel(window.side.draft_max)
    _wheel(window.model_bar.target_gpu)
    assert window.side.draft_max.value() == 4
    assert window.model_bar.target_gpu.value() == window.settings["n_gpu_layers"]


def _after_dialog(qtbot: Any, window: Any, open_dialog: Any, close_dialog: Any) -> None:
    """The user had clicked a spin box, then opened a dialog and closed it: typing goes to the
    message box, and no setting changes."""
    spin = window.side.draft_max
    qtbot.mouseClick(spin, Qt.MouseButton.LeftButton)
    assert _focused() is spin
    QTimer.singleShot(300, close_dialog)
    open_dialog()
    qtbot.waitUntil(lambda: _focused() is window.input, timeout=3000)
    before = spin.value()
    qtbot.keyClicks(_focused(), "7")
    assert spin.value() == before and window.input.toPlainText().endswith("7")


def test_focus_returns_to_the_message_box_after_every_dialog(
    qtbot: Any, make_window: Any, models: Any, models_dir: Any
) -> None:
    window = make_window(target_path=models.target, side_panel="shown", max_tokens=12)
    send_and_wait(qtbot, window, "Tell me a story")
    # the race: its button is disabled while racing (Qt then moves the focus to "Draft k")
    qtbot.mouseClick(window.side.race, Qt.MouseButton.LeftButton)
    dialog = window.race_dialog
    with qtbot.waitSignal(dialog.race_finished, timeout=2 * ANSWER_TIMEOUT_MS):
        pass
    dialog.close()
    qtbot.waitUntil(lambda: _focused() is window.input, timeout=3000)
    draft_k = window.side.draft_max.value()
    qtbot.keyClicks(_focused(), "3")
    assert window.side.draft_max.value() == draft_k and window.settings["draft_max"] == draft_k

    def close_modal() -> None:  # the dialog on top (the workers dialog is modal, About window-modal)
        (shown,) = [w for w in QApplication.topLevelWidgets() if isinstance(w, QDialog) and w.isVisible()]
        shown.reject()

    _after_dialog(qtbot, window, lambda: window.loader.edit_workers(), close_modal)  # Models → Workers…
    (about,) = [a for a in window.findChildren(QAction) if a.text() == "&About SpecChat"]  # Help → About
    _after_dialog(qtbot, window, about.trigger, close_modal)

    def open_library() -> None:  # a window of its own, not modal
        window.library_action.trigger()
        qtbot.waitUntil(lambda: QApplication.activeWindow() is window.library, timeout=10_000)
        window.library.close()

    _after_dialog(qtbot, window, open_library, lambda: None)
