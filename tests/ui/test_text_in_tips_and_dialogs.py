"""Issue 46, point 6: text is text in tooltips, labels and dialogs too. An MCP tool's name and a
failed server's stderr, a model's load error and a file's name show as written: `<img src=...>`
and `<b>` are characters, never a tag (no image loaded, nothing bold)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtWidgets import QLabel, QMessageBox

from desktop_app.ui.widgets.plain_text import MAX_TIP_CHARS, plain_box, plain_tip
from tests.ui.helpers import tip_text
from tests.ui.test_text_is_text import ResourceLog

TAGS = "<img src=file:///etc/passwd> and <b>bold</b>"
TOOL_TIMEOUT_MS = 120_000
EVIL_SERVER = f'''
from mcp.server.mcpserver import MCPServer

server = MCPServer("evil")


@server.tool(name={TAGS!r})
def evil() -> int:
    """A tool with a hostile name."""
    return 1


server.run("stdio")
'''


def shows_as_written(tooltip: str, text: str) -> None:
    """The tooltip, rendered as Qt renders it, shows ``text``'s characters and loads nothing."""
    assert GuiQt.mightBeRichText(tooltip)  # Qt reads it as HTML: so it must be escaped HTML
    doc = ResourceLog()
    doc.setHtml(tooltip)
    assert text in doc.toPlainText() and doc.asked == []
    assert "<b>" not in doc.toHtml().split("<body", 1)[1].replace("&lt;b&gt;", "")  # nothing made bold


def test_the_mcp_tooltip_shows_tool_names_and_stderr_as_written(qtbot: Any, make_window: Any, tmp_path: Path) -> None:
    script = tmp_path / "evil_server.py"
    script.write_text(EVIL_SERVER)
    crash = f"import sys; sys.stderr.write({TAGS!r} + chr(10)); sys.exit(3)"
    servers = [
        {"name": "evil", "command": sys.executable, "args": [str(script)]},
        {"name": "<b>broken</b>", "command": sys.executable, "args": ["-c", crash]},
    ]
    window = make_window(wait_loaded=False, mcp_servers=servers)
    qtbot.waitUntil(lambda: not window.mcp.starting and len(window.mcp.states) == 2, timeout=TOOL_TIMEOUT_MS)
    tooltip = window.tool_choice.toolTip()
    shown = tip_text(tooltip)
    assert f"evil: {TAGS}" in shown, shown
    assert "<b>broken</b>: " in shown
    shows_as_written(tooltip, TAGS)


def test_a_load_error_and_the_status_bar_show_their_text_as_written(qtbot: Any, make_window: Any) -> None:
    window = make_window(wait_loaded=False)
    window.load_banner.show_failure(f"{TAGS} is not a GGUF file", None)
    assert window.load_banner.message.textFormat() == Qt.TextFormat.PlainText
    assert TAGS in window.load_banner.message.text()
    shows_as_written(window.load_banner.message.toolTip(), TAGS)
    window.tell(f"Could not save {TAGS}")
    assert window.status.currentMessage() == f"Could not save {TAGS}"  # a status message is drawn as plain text
    for label in (window.status.backend, window.status.models, window.status.api, window.model_bar.status):
        assert label.textFormat() == Qt.TextFormat.PlainText, label.objectName()


def test_dialogs_and_long_tips_are_plain(qtbot: Any) -> None:
    box = plain_box(QMessageBox.Icon.Warning, "SpecChat", f"{TAGS} could not be read", QMessageBox.StandardButton.Ok)
    qtbot.addWidget(box)
    assert box.textFormat() == Qt.TextFormat.PlainText and box.text() == f"{TAGS} could not be read"
    label = box.findChild(QLabel, "qt_msgbox_label")
    assert label is not None and label.textFormat() == Qt.TextFormat.PlainText
    long = plain_tip("x" * (MAX_TIP_CHARS * 10))
    assert len(long) < MAX_TIP_CHARS + 200 and "(40,000 characters)" in tip_text(long)
    assert plain_tip("") == ""


@pytest.mark.parametrize("text", ['it\'s "quoted"', "a < b && c > d", "line one\nline two"])
def test_a_tip_keeps_every_character(qtbot: Any, text: str) -> None:
    assert tip_text(plain_tip(text)) == text


def test_a_tool_calls_question_names_its_server_as_written(qtbot: Any) -> None:
    from desktop_app.store.tool_calls import ToolCallRecord
    from desktop_app.ui.tools.mcp_card import ToolCallCard

    card = ToolCallCard(ToolCallRecord(1, 0, "call0", TAGS, "{}"), server="<b>srv</b>")
    qtbot.addWidget(card)
    (question,) = [label for label in card.question.findChildren(QLabel) if "Run this tool" in label.text()]
    assert question.textFormat() == Qt.TextFormat.PlainText and question.text() == "Run this tool from <b>srv</b>?"
    assert TAGS in card.header.text()  # a button's text is never HTML
