"""The sidebar: new, rename, delete, search, newest first; and the first run."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from desktop_app.engine import default_model_path
from tests.ui.helpers import send_and_wait, tip_text


def test_first_run_opens_ready_with_the_default_model(qtbot: Any, make_window: Any) -> None:
    window = make_window()
    assert window.client.models.target.path == str(default_model_path())
    assert window.model_bar.status.text().startswith("Ready")
    assert window.model_bar.target_picker.currentText() == "Built-in demo (SmolLM2-135M)"
    assert window.chat_view.placeholder.isVisible()
    assert window.send_button.isEnabled()
    assert window.status.backend.text().startswith(("CPU", "CUDA", "Metal", "Vulkan"))
    assert "SmolLM2" in window.status.models.text() or "Smollm2" in window.status.models.text()
    assert window.status.memory.text().startswith("memory ")
    for name in (
        "messageInput",
        "sendButton",
        "stopButton",
        "speculationMode",
        "speedGauge",
        "acceptanceMeter",
        "transcript",
        "conversationList",
        "raceButton",
        "targetPicker",
        "draftPicker",
    ):
        widget = window.findChild(object, name)
        assert widget is not None, name
        assert widget.accessibleName(), f"{name} has no accessible name"
    assert window.side.mode.currentData() == "best"  # Auto


def test_conversations_new_search_rename_delete(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, drafter="none", max_tokens=8)
    send_and_wait(qtbot, window, "About penguins")
    first = window.session.conversation_id
    qtbot.mouseClick(window.conversations.new_button, Qt.MouseButton.LeftButton)
    assert window.chat_view.messages == [] and window.session.conversation_id is None
    send_and_wait(qtbot, window, "About volcanoes")
    second = window.session.conversation_id
    sidebar = window.conversations
    assert sidebar.list.objectName() == "conversationList"
    assert sidebar.titles() == ["About volcanoes", "About penguins"]  # newest first
    # open the older one from the list
    qtbot.mouseClick(
        sidebar.list.viewport(),
        Qt.MouseButton.LeftButton,
        pos=sidebar.list.visualItemRect(sidebar.list.item(1)).center(),
    )
    assert window.session.conversation_id == first
    assert window.chat_view.messages[0].text == "About penguins"
    # search by message text
    qtbot.keyClicks(sidebar.search, "volcano")
    assert sidebar.titles() == ["About volcanoes"]
    sidebar.search.clear()
    sidebar.rename(second, "Geology")
    assert "Geology" in sidebar.titles()
    sidebar.delete(first)
    assert sidebar.titles() == ["Geology"]
    assert window.chat_view.messages == []  # the open conversation was the deleted one
    assert window.history.conversation(first) is None


def test_a_missing_default_model_says_how_to_install_it(
    qtbot: Any, make_window: Any, monkeypatch: Any, tmp_path: Any
) -> None:
    monkeypatch.setenv("SPECCHAT_DEFAULT_MODEL", str(tmp_path / "gone.gguf"))
    window = make_window(wait_loaded=False)
    with qtbot.waitSignal(window.client.load_failed, timeout=60_000) as failed:
        pass
    reason = failed.args[0].message
    assert "not installed" in reason and "pip install" in reason
    assert window.model_bar.status.text() == "Load failed"
    assert reason == tip_text(window.load_banner.message.toolTip())  # what the user reads
    assert window.load_banner.isVisible()
    assert not window.banner.isVisible() and window.client.running
