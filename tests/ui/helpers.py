"""Actions a user takes in the window, for the GUI tests."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from tests.ui.conftest import ANSWER_TIMEOUT_MS


def pick(box: Any, data: str) -> None:
    """Choose a combo box entry the way a user does (activated, not just currentIndex)."""
    index = box.findData(data)
    assert index >= 0, f"{data!r} is not offered"
    box.setCurrentIndex(index)
    box.activated.emit(index)


def type_and_send(qtbot: Any, window: Any, text: str) -> None:
    """Type into messageInput and press Enter, as a user would."""
    box = window.input
    box.setFocus()
    qtbot.keyClicks(box, text)
    qtbot.keyClick(box, Qt.Key.Key_Return)


def send_and_wait(qtbot: Any, window: Any, text: str, timeout: int = ANSWER_TIMEOUT_MS) -> dict[str, Any]:
    """Send ``text`` and wait for the answer; returns the finished payload."""
    with qtbot.waitSignal(window.client.finished, timeout=timeout) as blocker:
        type_and_send(qtbot, window, text)
    qtbot.waitUntil(lambda: not window.session.busy, timeout=5000)
    return blocker.args[0]


def last_answer(window: Any) -> Any:
    messages = [m for m in window.chat_view.messages if m.role == "assistant"]
    assert messages, "no assistant message in the transcript"
    return messages[-1]
