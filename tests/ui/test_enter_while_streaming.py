"""Issue 49, point 7: Enter while an answer streams. Nothing is sent and the text stays in the
box, as in LM Studio and Jan, but no longer silently: a line above the box says the answer is
still coming and what to do. Once the answer ends the line goes, and Enter sends the box's text
as it is, as its own message."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from tests.ui.helpers import next_answer, type_and_send


def user_texts(window: Any) -> list[str]:
    return [m.text for m in window.chat_view.messages if m.role == "user"]


def test_enter_while_an_answer_streams_keeps_the_text_and_says_why(qtbot: Any, make_window: Any) -> None:
    # the default model is slow enough here to type while it answers
    window = make_window(drafter="none", max_tokens=300)
    hint = window.findChild(QLabel, "waitHint")
    assert hint is not None and not hint.isVisible()
    with next_answer(qtbot, window.client) as watch:
        type_and_send(qtbot, window, "First question")
        qtbot.waitUntil(lambda: bool(watch.pieces))
        type_and_send(qtbot, window, "Second question")
        assert window.session.busy  # still answering the first
        assert hint.isVisible() and hint.text().startswith("The answer is still coming")
        assert "Esc" in hint.text()
        assert window.input.toPlainText() == "Second question"  # kept, not sent, not cleared
        assert user_texts(window) == ["First question"]
        if os.environ.get("SPECCHAT_SHOTS"):
            window.grab().save(str(Path(os.environ["SPECCHAT_SHOTS"]) / "enter_while_streaming.png"))
    qtbot.waitUntil(lambda: not window.session.busy)
    qtbot.waitUntil(lambda: not hint.isVisible(), timeout=1000)  # the answer ended: the line goes
    assert window.input.toPlainText() == "Second question"
    # Enter now sends the text as it is, as its own message
    with next_answer(qtbot, window.client):
        window.input.setFocus()
        qtbot.keyClick(window.input, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: window.session.busy)
        window.cancel()
    qtbot.waitUntil(lambda: not window.session.busy)
    assert user_texts(window) == ["First question", "Second question"]
    assert window.input.toPlainText() == "" and not hint.isVisible()
