"""The keyboard in the window (issue 49, point 6): a visible focus ring on a message's flat buttons,
Tab reaching only the last messages' buttons (shortcuts act on the last answer), the shortcut list
built from the real shortcuts with Enter and Shift+Enter, in the order users look for, and the
focus back in the message box after a model is opened."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QGuiApplication, QImage
from PySide6.QtWidgets import QApplication, QPushButton, QWidget

from desktop_app.ui.models.model_bar import OPEN_LIBRARY
from desktop_app.ui.transcript.message_actions import actions_of
from desktop_app.ui.transcript.message_widget import MessageWidget
from desktop_app.ui.transcript.text_label import TextLabel
from desktop_app.ui.window.shortcut_list import ShortcutList
from tests.ui.conftest import LOAD_TIMEOUT_MS
from tests.ui.helpers import last_answer, next_answer, pick, send_and_wait


def _activate(qtbot: Any, window: Any) -> None:
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)


def _tab_walk(qtbot: Any, window: Any, presses: int = 80) -> list[QWidget]:
    """The widgets Tab goes through from the message box, in order, once round the window."""
    window.input.setFocus()
    seen: list[QWidget] = []
    for _ in range(presses):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        widget = QApplication.focusWidget()
        if widget is window.input:
            break
        seen.append(widget)
    return seen


def _owner(widget: QWidget) -> MessageWidget | None:
    while widget is not None and not isinstance(widget, MessageWidget):
        widget = widget.parentWidget()
    return widget


def test_tab_reaches_the_last_messages_buttons_only_and_their_focus_shows(
    qtbot: Any, make_window: Any, models: Any, tmp_path: Path
) -> None:
    window = make_window(target_path=models.target, max_tokens=8)
    _activate(qtbot, window)
    for text in ("One", "Two", "Three"):
        send_and_wait(qtbot, window, text)
    walk = _tab_walk(qtbot, window)
    assert window.input in (QApplication.focusWidget(),), "Tab goes round the window back to the message box"
    in_messages = [w for w in walk if _owner(w) is not None]
    answer, question = last_answer(window), window.chat_view.messages[-2]
    assert not any(isinstance(w, TextLabel) for w in walk)  # no message text in the Tab chain
    further = [b for m in (answer, question) for b in actions_of(m).buttons if b.isVisible()]  # Continue, ⋯
    assert set(in_messages) == {
        answer.copy_button,
        answer.action_button,
        question.copy_button,
        question.action_button,
        *further,
    }
    assert len(further) == 3  # the answer stopped for its length: Continue and ⋯; the question's ⋯
    # the focused flat button shows it: a ring in the highlight colour
    button = answer.copy_button
    button.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(button.hasFocus)
    focused = button.grab().toImage()
    window.input.setFocus()
    qtbot.waitUntil(lambda: not button.hasFocus())
    plain = button.grab().toImage()
    assert focused != plain
    highlight = button.palette().highlight().color()
    assert _has_colour(focused, highlight) and not _has_colour(plain, highlight)
    button.setFocus(Qt.FocusReason.TabFocusReason)
    window.grab().save(str(tmp_path / "focus_ring.png"))


def _has_colour(image: QImage, colour: Any) -> bool:
    return any(image.pixelColor(x, y) == colour for x in range(image.width()) for y in range(image.height()))


def test_keys_act_on_the_last_answer(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, max_tokens=8)
    _activate(qtbot, window)
    send_and_wait(qtbot, window, "Hello")
    answer = last_answer(window)
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(window.input, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert QGuiApplication.clipboard().text() == answer.text
    with next_answer(qtbot, window.client) as watch:
        qtbot.keyClick(window.input, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)  # regenerate
    qtbot.waitUntil(lambda: not window.session.busy)
    assert watch.done is not None and len([m for m in window.chat_view.messages if m.role == "assistant"]) == 1
    qtbot.keyClick(window.input, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)  # edit your last message
    assert window.input.toPlainText() == "Hello" and window.editing_bar.isVisible()


def test_the_shortcut_list_has_the_real_keys_enter_included_in_the_order_users_look_for(
    qtbot: Any, make_window: Any, tmp_path: Path
) -> None:
    window = make_window(wait_loaded=False)
    window.findChild(QAction, "shortcutListAction").trigger()
    dialog = window.findChild(ShortcutList)
    rows = [(dialog.table.item(r, 0).text(), dialog.table.item(r, 1).text()) for r in range(dialog.table.rowCount())]
    keys = [k for k, _ in rows]
    assert "New" not in keys and not any(k.startswith("New") for k in keys)  # no platform key named "New"
    does = [d for _, d in rows]
    assert does[:3] == ["Send the message", "New line in the message", "Stop the answer"]
    assert keys[:3] == ["Enter", "Shift+Enter", "Esc"]
    for row in (
        ("Ctrl+F", "Find in the conversation"),
        ("F3", "Next match (Enter in the find bar)"),
        ("Ctrl+Shift+C", "Copy the last answer"),
        ("Ctrl+R", "Regenerate the last answer"),
        ("Ctrl+N", "New conversation"),
    ):
        assert row in rows, row
    assert does.index("Find in the conversation") < does.index("New conversation") < does.index("Preferences")
    assert len(does) == len(set(does))  # one row per shortcut, its keys together
    dialog.grab().save(str(tmp_path / "shortcuts.png"))


def test_after_a_model_is_opened_the_focus_is_in_the_message_box(
    qtbot: Any, make_window: Any, models: Any, models_dir: Any
) -> None:
    window = make_window(target_path=models.target, max_tokens=8)
    _activate(qtbot, window)
    picker = window.model_bar.target_picker
    picker.setFocus()
    pick(picker, OPEN_LIBRARY)  # "Model library…" in the picker; the library comes in front
    library = window.library
    qtbot.waitUntil(lambda: QApplication.activeWindow() is library)
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS):
        library.target_chosen.emit(str(models.draft))  # "Use as target"
    qtbot.wait(50)
    assert window.focusWidget() is window.input  # not the GPU-layers box next to the disabled picker
    library.close()
    _activate(qtbot, window)
    assert QApplication.focusWidget() is window.input
    assert not isinstance(QApplication.focusWidget(), QPushButton)
