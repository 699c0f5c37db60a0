"""While a tool call waits for the user (or runs), the conversation is busy: the last answer's
Regenerate and the question's Edit & resend look and are off, with its other actions; they come
back once the call is answered and the model has finished (issue 49, item 11)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from desktop_app.store.tool_calls import CallStatus
from desktop_app.ui.tools.mcp_card import DENY
from desktop_app.ui.transcript.message_actions import actions_of
from tests.ui.test_mcp_tools import TOOL_TIMEOUT_MS, _ask, _window


def test_regenerate_is_off_while_a_tool_call_waits(qtbot: Any, make_window: Any, models: Any, tmp_path: Path) -> None:
    window = _window(make_window, models, qtbot, tmp_path / "calls.txt")
    card = _ask(qtbot, window)
    question, answer = window.chat_view.messages[-2:]
    assert card.record.status is CallStatus.WAITING and window.session.busy
    assert answer.action_button.text() == "Regenerate"
    assert not answer.action_button.isEnabled() and not question.action_button.isEnabled()
    assert not actions_of(answer).more_button.isEnabled()
    if os.environ.get("SPECCHAT_SHOTS"):
        window.grab().save(os.path.join(os.environ["SPECCHAT_SHOTS"], "tool-call-waits.png"))
    qtbot.mouseClick(card.buttons[DENY], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.session.busy, timeout=TOOL_TIMEOUT_MS)
    last_question, last_answer = (
        [w for w in window.chat_view.messages if w.role == "user"][-1],
        [w for w in window.chat_view.messages if w.role == "assistant"][-1],
    )
    assert last_answer.action_button.isEnabled() and last_question.action_button.isEnabled()
