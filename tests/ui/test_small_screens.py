"""Small and scaled screens (issue 49, item 9): nothing is cut, the transcript keeps a readable
width, and its lines a readable length. At QT_SCALE_FACTOR=2 the context meter's "430 / 512
tokens · 7 oldest left out" was cut to "· 7 c" and the status bar past the window's edge; at
800x600 with the speed panel the transcript was ~290 px and scrolled sideways; at 1920 px its lines
ran to ~180 characters. Screens of a given size and scale need a process of their own
(tests/ui/window_probe.py); the 800x600 window is this process's (Qt's offscreen screen is 800 px wide)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt

from desktop_app.store import Settings
from desktop_app.ui.window.window_layout import MIN_CHAT

ROOT = Path(__file__).resolve().parents[2]
# A short code block: its longest line fits a transcript of MIN_CHAT px, not one of 290.
ANSWER = (
    "Here is a short function that keeps the guesses the target model agrees with, "
    "as the verifier does:\n\n```python\ndef keep(draft):\n    return draft[:4]  # agreed\n```\n\nThat is all."
)


def probe(tmp_path: Path, screen: tuple[int, int], scale: int, size: tuple[int, int], side_panel: str) -> Any:
    """The window measured on a screen of ``screen`` physical px at QT_SCALE_FACTOR ``scale``."""
    config = tmp_path / "screen.json"
    one = {"name": "s", "x": 0, "y": 0, "width": screen[0], "height": screen[1], "logicalDpi": 96, "dpr": 1}
    config.write_text(json.dumps({"screens": [one | {"logicalBaseDpi": 96}]}))
    env = dict(
        os.environ,
        QT_QPA_PLATFORM=f"offscreen:configfile={config}",
        QT_SCALE_FACTOR=str(scale),
        SPECCHAT_HOME=str(tmp_path / f"home-{scale}-{screen[0]}"),
    )
    args = [sys.executable, "-m", "tests.ui.window_probe", str(size[0]), str(size[1]), side_panel]
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_at_scale_2_the_context_meter_and_the_status_bar_show_whole(tmp_path: Path) -> None:
    # a 1280x800 laptop screen at 200 %: 640x400 px for the window
    seen = probe(tmp_path, (1280, 800), 2, (640, 400), "auto")
    assert seen["window"][0] <= 640, seen
    assert seen["meter_whole"], seen  # "… · 7 oldest left out" wraps, never cut
    assert seen["status_inside"] and seen["status_whole"], seen  # each part elides, none past the edge
    assert seen["transcript"] >= MIN_CHAT - 20 and seen["sideways"] == 0, seen


def test_at_1920_px_the_transcript_keeps_a_readable_line_length_centred(tmp_path: Path) -> None:
    seen = probe(tmp_path, (1920, 1080), 1, (1900, 1040), "shown")
    assert seen["transcript"] > 1200, seen
    assert 70 <= seen["longest_line"] <= 100, seen  # characters on the answer's longest line
    assert seen["off_centre"] <= 2, seen  # the column centred in the transcript
    assert seen["sideways"] == 0, seen


def test_at_800x600_the_speed_panel_leaves_the_transcript_a_usable_width(qtbot: Any, make_window: Any) -> None:
    window = make_window(side_panel="shown", wait_loaded=False)
    window.resize(800, 600)
    qtbot.waitUntil(lambda: window.width() == 800, timeout=2000)
    view = window.chat_view
    window.chat_view.add_message("assistant", ANSWER, {"generated_tokens": 40})
    QCoreApplication.processEvents()
    qtbot.waitUntil(lambda: window.side.gauge.isVisible(), timeout=2000)
    assert view.width() >= MIN_CHAT, view.width()  # the list and the panel narrowed for it
    assert view.horizontalScrollBar().maximum() == 0  # no sideways scrollbar for an ordinary answer
    # narrower still: the panel folds for a while (the button says so), the setting stays
    window.resize(700, 600)
    qtbot.waitUntil(lambda: not window.side.gauge.isVisible(), timeout=2000)
    assert not window.side_fold.action.isChecked()
    assert view.width() >= MIN_CHAT and view.horizontalScrollBar().maximum() == 0
    assert Settings.load()["side_panel"] == "shown"
    # wide enough again: it comes back
    window.resize(800, 600)
    qtbot.waitUntil(lambda: window.side.gauge.isVisible(), timeout=2000)
    assert window.side_fold.action.isChecked() and view.width() >= MIN_CHAT
    # the user's click folds it, and a wider window leaves it folded
    qtbot.mouseClick(window.side_fold.button, Qt.MouseButton.LeftButton)
    assert not window.side.gauge.isVisible() and Settings.load()["side_panel"] == "hidden"


def test_the_speed_panel_narrows_but_keeps_its_controls(qtbot: Any, make_window: Any) -> None:
    window = make_window(side_panel="shown", wait_loaded=False)
    window.resize(800, 600)
    qtbot.waitUntil(lambda: window.side.gauge.isVisible(), timeout=2000)
    side = window.side_fold.area
    assert side.width() <= 240  # narrowed for the transcript
    for part in (window.side.mode, window.side.race, window.side.max_tokens):
        assert part.width() > 60 and side.rect().contains(part.mapTo(side, part.rect().topLeft()))
