"""*Always allow* is a choice, not a box to type in (issue 49, item 11): a waiting tool call's card
allows this tool or every tool of its server, and Preferences → Tools offers the server's tools
as check boxes, "Every tool of this server", and a word while no tool is known yet."""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import Qt

from desktop_app.store.tool_calls import ToolCallRecord
from desktop_app.store.tool_servers import ALL_TOOLS, ToolServer
from desktop_app.ui.tools.mcp_card import ALWAYS, ALWAYS_SERVER, ToolCallCard
from desktop_app.ui.tools.mcp_settings import NO_TOOLS_YET, McpServersField
from tests.ui.test_mcp_tools import _ask, _window

SERVER = {"name": "files", "command": "npx", "args": ["-y", "fs"], "env": {}, "always_allow": []}


def test_the_card_allows_this_tool_or_every_tool_of_its_server(qtbot: Any) -> None:
    card = ToolCallCard(ToolCallRecord(1, 0, "c1", "read_file", '{"path": "a"}'), server="files")
    qtbot.addWidget(card)
    card.show()
    assert [card.scope.itemText(i) for i in range(card.scope.count())] == [
        "this tool (read_file)",
        "every tool from files",
    ]
    assert not card.scope.isEditable()
    with qtbot.waitSignal(card.decided) as first:
        qtbot.mouseClick(card.buttons[ALWAYS], Qt.MouseButton.LeftButton)
    card.scope.setCurrentIndex(1)
    with qtbot.waitSignal(card.decided) as second:
        qtbot.mouseClick(card.buttons[ALWAYS], Qt.MouseButton.LeftButton)
    assert (first.args, second.args) == ([ALWAYS], [ALWAYS_SERVER])
    if os.environ.get("SPECCHAT_SHOTS"):
        card.resize(700, card.sizeHint().height())
        card.grab().save(os.path.join(os.environ["SPECCHAT_SHOTS"], "always-allow-card.png"))


def test_every_tool_of_a_server_runs_without_asking() -> None:
    server = ToolServer.from_json(SERVER)
    assert not server.allows("read_file")
    assert server.allowing("read_file").allows("read_file") and not server.allowing("read_file").allows("write")
    assert server.allowing(ALL_TOOLS).allows("write")


def test_preferences_offer_the_tools_as_choices_and_say_when_none_is_known(qtbot: Any) -> None:
    field = McpServersField()
    qtbot.addWidget(field)
    field.set_value([SERVER])
    field.resize(560, 460)
    field.show()
    assert field.allowed_hint.isVisible() and field.allowed_hint.text() == NO_TOOLS_YET
    assert not field.allowed.isVisible()  # no empty box that looks like one to type in
    if os.environ.get("SPECCHAT_SHOTS"):
        field.grab().save(os.path.join(os.environ["SPECCHAT_SHOTS"], "always-allow-settings.png"))
    field.set_known_tools({"files": ["read_file", "write_file"]})
    assert field.allowed.isVisible() and not field.allowed_hint.isVisible()
    items = [field.allowed.item(i) for i in range(field.allowed.count())]
    assert [i.text() for i in items] == ["read_file", "write_file"]
    assert all(
        i.flags() & Qt.ItemFlag.ItemIsUserCheckable and not i.flags() & Qt.ItemFlag.ItemIsEditable for i in items
    )
    items[0].setCheckState(Qt.CheckState.Checked)
    assert field.value()[0]["always_allow"] == ["read_file"]
    field.allow_all.setChecked(True)
    assert field.value()[0]["always_allow"] == [ALL_TOOLS, "read_file"] and not field.allowed.isEnabled()
    field.set_value(field.value())  # as the dialog shows it again
    shown = [field.allowed.item(i).text() for i in range(field.allowed.count())]
    assert field.allow_all.isChecked() and shown == ["read_file", "write_file"]  # "*" is the check box


def test_always_allow_every_tool_from_the_card_is_saved_and_asks_no_more(
    qtbot: Any, make_window: Any, models: Any, tmp_path: Any
) -> None:
    window = _window(make_window, models, qtbot, tmp_path / "calls.txt")
    card = _ask(qtbot, window)
    card.scope.setCurrentIndex(card.scope.findData(ALWAYS_SERVER))
    qtbot.mouseClick(card.buttons[ALWAYS], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.session.busy, timeout=120_000)
    assert window.settings["mcp_servers"][0]["always_allow"] == [ALL_TOOLS]
    assert window.mcp.always_allowed(window.mcp.tool("add"))
