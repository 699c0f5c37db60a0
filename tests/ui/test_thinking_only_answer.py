"""Issue 49, point 8: a thinking model that spends the whole answer length thinking. The
answer says so (and what to do) instead of showing nothing, and Copy copies the thinking
(its tooltip says so) instead of silently copying an empty string."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtGui import QGuiApplication

from tests.ui.helpers import last_answer, send_and_wait


def test_an_answer_that_only_thought_says_so_and_copies_the_thinking(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.thinking, drafter="none", max_tokens=6)
    assert window.think.isChecked()
    done = send_and_wait(qtbot, window, "A hard question")
    assert done.stats.thinking_tokens == done.stats.generated_tokens == 6
    first_id = window.session.conversation_id
    answer = last_answer(window)
    note = answer.content.note
    assert note.isVisible() and note.objectName() == "noAnswerNote"
    assert note.text() == "The model used all 6 tokens thinking and gave no answer: raise Max tokens or turn Think off"
    assert answer.copy_button.toolTip() == "Copy the thinking: this answer has none of its own"
    QGuiApplication.clipboard().setText("before")
    answer.copy_button.click()
    copied = QGuiApplication.clipboard().text()
    assert copied and copied != "before" and copied in done.text  # the thinking, not ""
    if os.environ.get("SPECCHAT_SHOTS"):
        window.grab().save(str(Path(os.environ["SPECCHAT_SHOTS"]) / "thinking_only.png"))
    # Think off: an answer with text has no note, and Copy copies the answer
    window.session.open(None)
    window.think.setChecked(False)
    send_and_wait(qtbot, window, "An easy question")
    answer = last_answer(window)
    assert not answer.content.note.isVisible() and answer.copy_button.toolTip() == ""
    # reopened from the history, the first answer still says it
    window.session.open(first_id)
    first = last_answer(window)
    assert first.content.note.text().startswith("The model used all 6 tokens thinking")
