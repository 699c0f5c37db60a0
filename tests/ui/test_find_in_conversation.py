"""Find in the conversation (Ctrl+F): a find bar over the transcript, "n of m", next and previous
with Enter, Shift+Enter and F3, Esc closes; matches marked in the messages, case-insensitive, found
in the whole conversation: the older messages not shown yet and a long message's text past its
render included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from desktop_app.ui.transcript.chat_view import SHOWN_AT_ONCE
from desktop_app.ui.transcript.find_marks import CURRENT_TINT, MATCH_TINT
from desktop_app.ui.transcript.full_text import FullTextDialog

LONG = "".join(f"Filler line number {i} of a long answer.\n" for i in range(6000)) + "The ZEBRA at the very end."


def _conversation() -> list[tuple[str, str, dict[str, Any] | None]]:
    """SHOWN_AT_ONCE + 10 messages: a zebra in an early one (not shown at first), two in the
    middle (cases differ), one past a long answer's render, one in bold in the last answer."""
    messages: list[tuple[str, str, dict[str, Any] | None]] = []
    for i in range(SHOWN_AT_ONCE + 10):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"Message {i} about horses."
        if i == 2:
            text = "An early zebra."
        elif i == SHOWN_AT_ONCE:
            text = "Zebra crossing, then another zEbRa."
        elif i == SHOWN_AT_ONCE + 5:
            text = LONG
        elif i == SHOWN_AT_ONCE + 9:
            text = "The last answer names a **zebra** in bold."
        messages.append((role, text, {"generated_tokens": 5, "mode": "off"} if role == "assistant" else None))
    return messages


def _marked(window: Any, tint: str) -> list[Any]:
    return [w for w in window.chat_view.messages for label in w.content.answer_text.labels() if tint in label.text()]


def _count(window: Any) -> str:
    return str(window.find_in_chat.bar.count.text())


def test_ctrl_f_finds_marks_and_walks_every_match_of_the_conversation(
    qtbot: Any, make_window: Any, tmp_path: Path
) -> None:
    window = make_window(wait_loaded=False)
    messages = _conversation()
    conversation = window.history.add_conversation("Zoo", messages, {})
    window.conversations.refresh()
    window.session.open(conversation.id)
    qtbot.waitUntil(lambda: window.chat_view.lazy.count == 0, timeout=20_000)
    assert window.chat_view.earlier_count == 10
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    window.input.setFocus()
    total = sum(text.lower().count("zebra") for _role, text, _stats in messages)
    assert total == 5

    bar = window.find_in_chat.bar
    assert not bar.isVisible()
    qtbot.keyClick(window.input, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert bar.isVisible() and bar.field.hasFocus()
    qtbot.keyClicks(bar.field, "ZEBRA")
    # the first match among the messages shown: the earlier one is counted, left where it is
    assert _count(window) == f"2 of {total}" and window.chat_view.earlier_count == 10
    current = _marked(window, CURRENT_TINT)
    assert len(current) == 1 and "Zebra crossing" in current[0].text
    assert {w.text for w in _marked(window, MATCH_TINT)} >= {current[0].text, messages[-1][1]}  # in bold too
    label = current[0].content.answer_text.label
    spot = label.mapTo(window.chat_view.viewport(), QPoint(0, 0))
    assert 0 <= spot.y() < window.chat_view.viewport().height()  # scrolled to
    window.grab().save(str(tmp_path / "find.png"))

    qtbot.keyClick(bar.field, Qt.Key.Key_Return)  # next: the second in the same message
    assert _count(window) == f"3 of {total}" and _marked(window, CURRENT_TINT) == current
    qtbot.keyClick(bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert _count(window) == f"2 of {total}"
    qtbot.keyClick(bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)  # the earlier message
    assert _count(window) == f"1 of {total}" and window.chat_view.earlier_count == 0
    assert _marked(window, CURRENT_TINT)[0].text == "An early zebra."

    # past the long answer's render: its whole text opens, the match selected
    qtbot.keyClick(bar.field, Qt.Key.Key_F3)
    qtbot.keyClick(bar.field, Qt.Key.Key_F3)
    qtbot.keyClick(bar.field, Qt.Key.Key_F3)
    assert _count(window) == f"4 of {total}"
    dialog = window.findChild(FullTextDialog)
    assert dialog is not None and dialog.isVisible()
    assert dialog.view.textCursor().selectedText() == "ZEBRA"
    dialog.close()
    bar.field.setFocus()
    qtbot.keyClick(bar.field, Qt.Key.Key_F3)  # the last answer's, in bold
    assert _count(window) == f"5 of {total}" and _marked(window, CURRENT_TINT)[0].text == messages[-1][1]
    qtbot.keyClick(bar.field, Qt.Key.Key_F3)  # round the end
    assert _count(window) == f"1 of {total}"

    bar.field.setText("okapi")
    assert _count(window) == "No matches" and not _marked(window, MATCH_TINT)
    bar.field.setText("zebra")
    qtbot.keyClick(bar.field, Qt.Key.Key_Escape)  # closes the bar, not the answer's Stop
    assert not bar.isVisible() and window.input.hasFocus()
    assert not _marked(window, MATCH_TINT) and not _marked(window, CURRENT_TINT)
    qtbot.keyClick(window.input, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)  # again: the same text, found again
    assert bar.isVisible() and bar.field.selectedText() == "zebra"
    assert _count(window).endswith(f" of {total}") and _marked(window, CURRENT_TINT)


def test_a_match_in_a_folded_thinking_block_opens_it(qtbot: Any, make_window: Any) -> None:
    window = make_window(wait_loaded=False)
    messages: list[tuple[str, str, dict[str, Any] | None]] = [
        ("user", "Think about it.", None),
        ("assistant", "<think>A striped idea.</think>The answer, plainly.", {"generated_tokens": 9, "mode": "off"}),
    ]
    conversation = window.history.add_conversation("Thoughts", messages, {})
    window.conversations.refresh()
    window.session.open(conversation.id)
    qtbot.waitUntil(lambda: window.chat_view.lazy.count == 0, timeout=20_000)
    answer = window.chat_view.messages[-1]
    assert answer.content.toggle.isVisible() and not answer.content.toggle.isChecked()
    window.find_in_chat.open()
    qtbot.keyClicks(window.find_in_chat.bar.field, "STRIPED")
    assert _count(window) == "1 of 1"
    assert answer.content.toggle.isChecked()  # opened where the match is
    assert any(CURRENT_TINT in label.text() for label in answer.content.reasoning_text.labels())
