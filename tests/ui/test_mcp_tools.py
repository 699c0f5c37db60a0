"""An MCP server's tool used from the window: the user adds a real stdio server (started by the
window), the factory tools model (Qwen 2.5's template) calls its tool, the call shows as a folded
card with its arguments and, unfolded, its result; it runs only once allowed, a denied call is not
run, and the calls stay in the history when the conversation is reopened."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from desktop_app.store.tool_calls import CallStatus
from desktop_app.ui.tools.mcp_card import ALWAYS, DENY, ONCE, ToolCallCard
from tests.ui.helpers import pick, type_and_send

SERVER = Path(__file__).with_name("mcp_server.py")
TOOL_TIMEOUT_MS = 120_000


def _window(make_window: Any, models: Any, qtbot: Any, log: Path) -> Any:
    server = {"name": "calc", "command": sys.executable, "args": [str(SERVER)], "env": {"MCP_TEST_LOG": str(log)}}
    window = make_window(target_path=models.tools, mcp_servers=[server], max_tokens=80, temperature=0.0)
    qtbot.waitUntil(lambda: [t.name for t in window.mcp.tools] == ["add"], timeout=TOOL_TIMEOUT_MS)
    assert window.tool_choice.isVisible()
    pick(window.tool_choice, "required")  # the tiny model calls a tool only when made to (a grammar)
    return window


def _cards(window: Any) -> list[ToolCallCard]:
    return [c for w in window.chat_view.messages for c in w.findChildren(ToolCallCard)]


def _ask(qtbot: Any, window: Any) -> ToolCallCard:
    type_and_send(qtbot, window, "What is 2 plus 3? Use the add tool.")
    qtbot.waitUntil(lambda: bool(_cards(window)), timeout=TOOL_TIMEOUT_MS)
    (card,) = _cards(window)
    return card


def test_an_allowed_call_runs_and_its_card_shows_arguments_and_result(
    qtbot: Any, make_window: Any, models: Any, tmp_path: Path
) -> None:
    log = tmp_path / "calls.txt"
    window = _window(make_window, models, qtbot, log)
    card = _ask(qtbot, window)
    arguments = json.loads(card.record.arguments)
    assert set(arguments) == {"a", "b"}
    # it waits for the user: nothing ran, Send is off and Stop on
    assert card.question.isVisible() and "waiting for you" in card.header.text()
    assert "add" in card.header.text() and f'"a": {arguments["a"]}' in card.header.text()
    assert not log.exists() and window.session.busy and window.stop_button.isEnabled()
    assert not card.details.isVisible()  # folded
    qtbot.mouseClick(card.buttons[ONCE], Qt.MouseButton.LeftButton)
    total = arguments["a"] + arguments["b"]
    qtbot.waitUntil(lambda: card.record.status is CallStatus.DONE, timeout=TOOL_TIMEOUT_MS)
    assert log.read_text() == f"{arguments['a']}+{arguments['b']}={total}\n"
    assert "· done" in card.header.text() and not card.question.isVisible()
    qtbot.mouseClick(card.header, Qt.MouseButton.LeftButton)  # unfold
    assert card.details.isVisible()
    details = card.details.text()
    assert f'"a": {arguments["a"]}' in details and f"Result:\n{total}" in details
    # the model goes on with the result, in a further answer, until it answers without a call
    qtbot.waitUntil(lambda: not window.session.busy, timeout=TOOL_TIMEOUT_MS)
    roles = [w.role for w in window.chat_view.messages]
    assert roles == ["user", "assistant", "assistant"]
    sent = window.session.engine_messages()
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant"][: len(sent)]
    assert sent[2]["content"] == str(total) and sent[1]["tool_calls"][0]["function"]["name"] == "add"
    # reopened, the card is there again with its result
    conversation = window.session.conversation_id
    window.session.open(None)
    window.session.open(conversation)
    (again,) = _cards(window)
    assert again.record.status is CallStatus.DONE and f"Result:\n{total}" in again.details.text()


def test_a_denied_call_is_not_run_and_the_model_is_told(
    qtbot: Any, make_window: Any, models: Any, tmp_path: Path
) -> None:
    log = tmp_path / "calls.txt"
    window = _window(make_window, models, qtbot, log)
    card = _ask(qtbot, window)
    qtbot.mouseClick(card.buttons[DENY], Qt.MouseButton.LeftButton)
    assert "· denied" in card.header.text() and not card.question.isVisible()
    qtbot.waitUntil(lambda: not window.session.busy, timeout=TOOL_TIMEOUT_MS)
    assert not log.exists()  # the tool never ran
    tool_message = window.session.engine_messages()[2]
    assert tool_message["role"] == "tool" and tool_message["content"] == "The user denied this call."


def test_stop_while_a_call_waits_runs_nothing_and_always_allow_asks_no_more(
    qtbot: Any, make_window: Any, models: Any, tmp_path: Path
) -> None:
    log = tmp_path / "calls.txt"
    window = _window(make_window, models, qtbot, log)
    card = _ask(qtbot, window)
    qtbot.mouseClick(window.stop_button, Qt.MouseButton.LeftButton)
    assert "· stopped" in card.header.text() and not window.session.busy
    assert [w.role for w in window.chat_view.messages] == ["user", "assistant"]  # the model did not go on
    assert not log.exists()
    # "Always allow" runs it and remembers: the next call runs without asking
    window.session.open(None)
    card = _ask(qtbot, window)
    qtbot.mouseClick(card.buttons[ALWAYS], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.session.busy, timeout=TOOL_TIMEOUT_MS)
    assert window.settings["mcp_servers"][0]["always_allow"] == ["add"]
    window.session.open(None)
    type_and_send(qtbot, window, "And 4 plus 5?")
    qtbot.waitUntil(
        lambda: bool(_cards(window)) and _cards(window)[0].record.status is CallStatus.DONE, timeout=TOOL_TIMEOUT_MS
    )
    assert len(log.read_text().splitlines()) == 2


def test_servers_are_added_in_preferences_and_a_failed_start_says_why(
    qtbot: Any, make_window: Any, models: Any, tmp_path: Path
) -> None:
    window = make_window(target_path=models.tools)
    assert window.mcp.host is None and not window.tool_choice.isVisible()  # nothing runs before a server is added
    dialog = window.preferences.open()
    dialog.show_section("Tools")
    field = dialog.fields["mcp_servers"]
    qtbot.mouseClick(field.add_button, Qt.MouseButton.LeftButton)
    for box, text in ((field.name, "calc"), (field.command, sys.executable), (field.args, str(SERVER))):
        box.selectAll()
        qtbot.keyClicks(box, text)
    field.env.setPlainText(f"MCP_TEST_LOG={tmp_path / 'calls.txt'}")
    qtbot.mouseClick(field.add_button, Qt.MouseButton.LeftButton)  # a second one that cannot start
    field.command.setText("")
    qtbot.keyClicks(field.command, "/nonexistent/mcp-server")
    qtbot.mouseClick(field.add_button, Qt.MouseButton.LeftButton)  # a third, left without a command: not valid
    assert not dialog.ok.isEnabled() and "command" in field.error.text()
    qtbot.mouseClick(field.remove_button, Qt.MouseButton.LeftButton)
    assert dialog.ok.isEnabled()
    qtbot.mouseClick(dialog.ok, Qt.MouseButton.LeftButton)
    saved = window.settings["mcp_servers"]
    assert [(s["name"], s["command"], s["args"]) for s in saved] == [
        ("calc", sys.executable, [str(SERVER)]),
        ("server 1", "/nonexistent/mcp-server", []),
    ]
    assert saved[0]["env"] == {"MCP_TEST_LOG": str(tmp_path / "calls.txt")}
    qtbot.waitUntil(lambda: not window.mcp.starting and bool(window.mcp.states), timeout=TOOL_TIMEOUT_MS)
    assert [t.name for t in window.mcp.tools] == ["add"]
    assert window.tool_choice.isVisible()
    summary = window.tool_choice.toolTip()
    assert "calc: add" in summary
    assert "'server 1' did not start: the command '/nonexistent/mcp-server' was not found" in summary
    # switched off in Preferences, its tools are no longer offered
    dialog = window.preferences.open()
    field = dialog.fields["mcp_servers"]
    field.list.item(0).setCheckState(Qt.CheckState.Unchecked)
    qtbot.mouseClick(dialog.ok, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.mcp.starting, timeout=TOOL_TIMEOUT_MS)
    assert window.mcp.tools == [] and window.settings["mcp_servers"][0]["enabled"] is False


def test_a_tool_no_grammar_takes_is_named_and_answers_still_come(
    qtbot: Any, make_window: Any, models: Any, tmp_path: Path
) -> None:
    env = {"MCP_TEST_LOG": str(tmp_path / "calls.txt"), "MCP_TEST_SCHEMAS": "hostile"}
    server = {"name": "calc", "command": sys.executable, "args": [str(SERVER)], "env": env}
    window = make_window(target_path=models.tools, mcp_servers=[server], max_tokens=12, temperature=0.0)
    qtbot.waitUntil(lambda: sorted(t.name for t in window.mcp.tools) == ["add", "total"], timeout=TOOL_TIMEOUT_MS)
    notices: list[str] = []
    window.mcp.notice.connect(notices.append)
    pick(window.tool_choice, "required")
    type_and_send(qtbot, window, "Add the numbers.")
    qtbot.waitUntil(lambda: not window.session.busy, timeout=TOOL_TIMEOUT_MS)
    assert len(notices) == 1 and "the MCP tool 'total'" in notices[0] and "'minItems' 10,000,000" in notices[0]
    assert "\n" not in notices[0] and window.client.running
    assert [w.role for w in window.chat_view.messages][:2] == ["user", "assistant"]


def test_a_tool_of_twenty_thousand_items_is_called_and_the_engine_lives(
    qtbot: Any, make_window: Any, models: Any, tmp_path: Path
) -> None:
    env = {"MCP_TEST_LOG": str(tmp_path / "calls.txt"), "MCP_TEST_SCHEMAS": "long"}
    server = {"name": "calc", "command": sys.executable, "args": [str(SERVER)], "env": env}
    window = make_window(target_path=models.tools, mcp_servers=[server], max_tokens=40, temperature=0.0)
    qtbot.waitUntil(lambda: sorted(t.name for t in window.mcp.tools) == ["add", "tally"], timeout=TOOL_TIMEOUT_MS)
    notices: list[str] = []
    window.mcp.notice.connect(notices.append)
    pick(window.tool_choice, "required")
    type_and_send(qtbot, window, "Add 2 and 3.")  # forced: a call under the grammar of both tools
    qtbot.waitUntil(lambda: not window.session.busy, timeout=TOOL_TIMEOUT_MS)
    assert window.client.running and not notices  # the engine took the grammar (it crashed on it before)
    assert [w.role for w in window.chat_view.messages][:2] == ["user", "assistant"]
    assert all(card.record.name in ("add", "tally") for card in _cards(window))
