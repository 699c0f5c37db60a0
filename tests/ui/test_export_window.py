"""Issue 35, point 14 in the real window: export a conversation as Markdown and JSON (context menu
and File menu), import the JSON, conversation dates in the list, Help → Keyboard shortcuts."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtGui import QAction, QKeySequence, QShortcut  # noqa: E402

from desktop_app.ui.conversations.conversation_list import friendly_date  # noqa: E402
from desktop_app.ui.widgets import file_dialogs  # noqa: E402
from desktop_app.ui.window.shortcut_list import NO_DESCRIPTION, ShortcutList  # noqa: E402

QUESTION = "In Java, what does List<String> mean? And is <b>this</b> bold?"
STATS = {"tokens": 9, "tokens_per_s": 40.0}


def _chat(window, title: str = "Java generics") -> int:
    conv = window.history.create_conversation(title)
    window.history.add_message(conv.id, "user", QUESTION)
    window.history.add_message(conv.id, "assistant", "A `List<String>` holds strings; <b> stays <b>.", STATS)
    window.conversations.refresh()
    return conv.id


def _menu_action(menu, text: str) -> QAction:
    (action,) = [a for a in menu.actions() if a.text() == text]
    return action


def test_export_from_the_list_and_import_from_the_file_menu(
    qtbot, make_window, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = make_window(wait_loaded=False)
    original = _chat(window)
    item = window.conversations.list.item(0)
    menu = window.conversations.context_menu(item)
    markdown, exported = tmp_path / "chat.md", tmp_path / "chat.json"
    dialog = file_dialogs.QFileDialog
    monkeypatch.setattr(dialog, "getSaveFileName", lambda *_a, **_k: (str(markdown), ""))
    _menu_action(menu, "Export as Markdown…").trigger()
    monkeypatch.setattr(dialog, "getSaveFileName", lambda *_a, **_k: (str(exported), ""))
    _menu_action(menu, "Export as JSON…").trigger()

    text = markdown.read_text(encoding="utf-8")
    assert QUESTION in text and "<b> stays <b>" in text and "&lt;" not in text
    data = json.loads(exported.read_text(encoding="utf-8"))
    assert [m["content"] for m in data["messages"]][0] == QUESTION

    monkeypatch.setattr(dialog, "getOpenFileName", lambda *_a, **_k: (str(exported), ""))
    with qtbot.waitSignal(window.transfer.imported):  # read and checked on a background thread
        window.transfer.import_action.trigger()

    new_id = window.session.conversation_id
    assert new_id and new_id != original
    got = [(m.role, m.content, m.stats) for m in window.history.messages(new_id)]
    assert got == [(m.role, m.content, m.stats) for m in window.history.messages(original)]
    assert [(m.role, m.text) for m in window.chat_view.messages][0] == ("user", QUESTION)
    assert window.conversations.titles().count("Java generics") == 2


def test_a_bad_file_gets_a_clear_error_and_imports_nothing(qtbot, make_window, tmp_path: Path) -> None:
    window = make_window(wait_loaded=False)
    _chat(window)
    before = window.conversations.titles()
    bad = tmp_path / "notes.json"
    bad.write_text('{"format": "specchat-conversation", "version": 1, "title": "x", "messages": [42]}')

    with qtbot.waitSignal(window.transfer.failed) as failed:
        assert window.transfer.import_from(bad) is None

    assert failed.args[0] == "notes.json is not a SpecChat conversation: message 1 is not an object"
    assert window.conversations.titles() == before


def test_the_file_menu_offers_export_and_import(qtbot, make_window) -> None:
    window = make_window(wait_loaded=False)
    file_menu = window.menuBar().actions()[0].menu()
    texts = [a.text() for a in file_menu.actions() if a.text()]
    assert texts[:3] == ["Export as &Markdown…", "Export as &JSON…", "&Import conversation…"]
    assert texts[-1] == "&Quit"


def test_conversations_show_when_they_were_last_used_and_search_still_works(qtbot, make_window) -> None:
    window = make_window(wait_loaded=False)
    _chat(window, "Fresh chat")
    old = _chat(window, "Old chat")
    last_year = datetime(datetime.now().year - 1, 12, 3, 9, 30).timestamp()
    window.history._db.execute("UPDATE conversations SET updated = ? WHERE id = ?", (last_year, old))
    window.conversations.refresh()

    sidebar = window.conversations
    assert sidebar.titles() == ["Fresh chat", "Old chat"]
    assert sidebar.dates()[0].startswith("Today ")
    assert sidebar.dates()[1] == f"3 Dec {datetime.now().year - 1}"
    qtbot.keyClicks(sidebar.search, "Fresh")  # titles, not dates, are searched
    assert sidebar.titles() == ["Fresh chat"]
    sidebar.search.setText("Dec")
    assert sidebar.titles() == []


def test_friendly_dates() -> None:
    now = datetime(2026, 5, 14, 18, 0)
    assert friendly_date(datetime(2026, 5, 14, 14, 5).timestamp(), now) == "Today 14:05"
    assert friendly_date(datetime(2026, 5, 13, 9, 30).timestamp(), now) == "Yesterday 09:30"
    assert friendly_date(datetime(2026, 3, 3, 9, 30).timestamp(), now) == "3 Mar"
    assert friendly_date(datetime(2025, 12, 3, 9, 30).timestamp(), now) == "3 Dec 2025"


def test_help_lists_every_shortcut_the_window_has(qtbot, make_window) -> None:
    window = make_window(wait_loaded=False)
    action = window.findChild(QAction, "shortcutListAction")
    action.trigger()
    dialog = window.findChild(ShortcutList)
    assert dialog is not None and dialog.isVisible()

    listed = {(dialog.table.item(r, 0).text(), dialog.table.item(r, 1).text()) for r in range(dialog.table.rowCount())}
    native = QKeySequence.SequenceFormat.NativeText
    every = {k.toString(native) for a in window.findChildren(QAction) for k in a.shortcuts() if not k.isEmpty()}
    every |= {k.toString(native) for s in window.findChildren(QShortcut) for k in s.keys() if not k.isEmpty()}
    typed = {"Enter", "Shift+Enter"}  # the message box's own keys (Enter, Shift+Enter), no QAction
    assert every and every | typed == {key for keys, _what in listed for key in keys.split(" / ")}
    assert ("Ctrl+L", "Model library") in listed and ("Esc", "Stop the answer") in listed
    assert ("F2", "Rename the conversation (in Conversations)") in listed
    assert all(what != NO_DESCRIPTION for _keys, what in listed)
