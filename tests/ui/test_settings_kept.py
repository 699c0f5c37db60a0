"""Issue 46, point 5 in the real window: whatever settings.json holds, the window starts, says once
in the status bar what it could not use, and loses nothing (a copy kept, later keys written back)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pytestqt")

from desktop_app.store import History, Settings  # noqa: E402
from desktop_app.ui.main_window import MainWindow  # noqa: E402

CASES = {
    "a 5,000-digit integer": '{"max_tokens": 1' + "0" * 5000 + ', "temperature": 0.5}',
    "100k-deep nesting": '{"temperature": 0.5, "recent_files": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "values out of range, a later key, a 10 MB system prompt": json.dumps(
        {"temperature": 0.5, "repeat_penalty": 1e-300, "a_later_setting": [1], "system_prompt": "x" * 10_000_000}
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_window_starts_says_so_once_and_keeps_the_file(qtbot: Any, home: Path, case: str) -> None:
    path = home / "config" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CASES[case])
    history = History()
    window = MainWindow(Settings.load(), history)
    qtbot.addWidget(window)
    window.start()
    try:
        (notice,) = window.notices
        assert "\n" not in notice and window.status.currentMessage() == notice
        assert window.settings["temperature"] == 0.5 and window.settings["repeat_penalty"] == 1.0
        assert window.settings["system_prompt"] == "" and window.settings["max_tokens"] == 512
        window.save_settings()
        kept = [p for p in path.parent.iterdir() if p.name.startswith(("settings.json.bad-", "settings.json.broken-"))]
        assert [p.read_text() for p in kept] == [CASES[case]] and kept[0].name in notice
        saved = json.loads(path.read_text())
        assert saved["temperature"] == 0.5
        if "later" in case:
            assert saved["a_later_setting"] == [1] and "(repeat_penalty): a number from 0.1 to 10," in notice
    finally:
        window.close()
        history.close()


def test_a_system_prompt_past_the_limit_cannot_be_saved_from_preferences(qtbot: Any, make_window: Any) -> None:
    from desktop_app.store.settings import MAX_TEXT_CHARS
    from tests.ui.test_preferences import open_preferences

    window = make_window(wait_loaded=False)
    dialog = open_preferences(qtbot, window)
    prompt = dialog.fields["system_prompt"]
    prompt.set_value("x" * (MAX_TEXT_CHARS + 1))
    assert not dialog.ok.isEnabled() and "at most" in prompt.toolTip()
    prompt.set_value("Be brief.")
    assert dialog.ok.isEnabled()
    dialog.ok.click()
    assert window.settings["system_prompt"] == "Be brief."
