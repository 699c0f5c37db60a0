"""The Think switch in the real window, with the real engine process: shown only for a model
whose template has one, kept per conversation, and reaching the rendered prompt (the factory's
thinking template opens "<think>" in the generation prompt when on and closes it when off)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, Qt

from desktop_app.engine.reasoning import THINK_TAGS
from tests.ui.helpers import send_and_wait


def click(qtbot: Any, box: Any) -> None:
    """Click the check box's own box (a wide check box toggles only on its box and label)."""
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.rect().center().y()))


def test_the_think_switch_is_kept_per_conversation_and_reaches_the_prompt(
    qtbot: Any, make_window: Any, models: Any
) -> None:
    window = make_window(target_path=models.thinking, drafter="none", max_tokens=6)
    switch = window.think
    assert switch.objectName() == "thinkSwitch" and switch.isVisible() and switch.text() == "Think"
    assert switch.isChecked()  # the template's default: thinking
    assert window.chat_view.reasoning_format == THINK_TAGS
    # Off before the first message: the new conversation keeps it, and the prompt closed the section.
    click(qtbot, switch)
    assert not switch.isChecked()
    done = send_and_wait(qtbot, window, "First question")
    first = window.session.conversation_id
    assert window.history.option(first, "think") is False
    assert not done.text.startswith("<think>") and done.stats.thinking_tokens == 0
    # A new conversation starts at the default: the answer starts in the opened section.
    window.session.open(None)
    assert switch.isChecked()
    done = send_and_wait(qtbot, window, "Second question")
    second = window.session.conversation_id
    assert done.text.startswith("<think>\n") and done.stats.thinking_tokens == done.stats.generated_tokens == 6
    # Each conversation shows its own choice again.
    window.session.open(first)
    assert not switch.isChecked()
    window.session.open(second)
    assert switch.isChecked()
    click(qtbot, switch)
    assert window.history.option(second, "think") is False
    done = send_and_wait(qtbot, window, "Third question")
    assert not done.text.startswith("<think>") and done.stats.thinking_tokens == 0


def test_no_switch_for_a_model_without_one(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=4)
    assert not window.think.isVisible() and window.think.choice() is None
    # <think> sections of answers stored from a thinking model still fold
    assert window.chat_view.reasoning_format == THINK_TAGS
    assert window.answers.request_for([{"role": "user", "content": "Hi"}]).think is None
