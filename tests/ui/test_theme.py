"""The theme (issue 49's list: a theme switch): System, Light or Dark in Preferences → Appearance,
applied at once to the whole window, its messages' colours included (code blocks, the user's
message background), and kept across a restart; System puts the desktop's palette back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QLabel

from desktop_app.store import Settings
from desktop_app.ui.preferences.theme import ThemeSwitch, theme_palette
from desktop_app.ui.transcript.drafter_tints import drafter_tint, is_dark
from desktop_app.ui.transcript.markdown_html import code_style

ANSWER = "Here is the code:\n\n```python\nanswer = 42\n```\n\nThat is all."


@pytest.fixture(autouse=True)
def desktop_palette() -> Iterator[QPalette]:
    """The palette the desktop gives (the application's is shared by every test): put back after."""
    yield QPalette(QApplication.palette())
    ThemeSwitch().apply("system")


def _texts(widget: Any) -> str:
    return "".join(label.text() for label in widget.findChildren(QLabel))


def _choose(qtbot: Any, window: Any, theme: str) -> None:
    dialog = window.preferences.open()
    dialog.show_section("Appearance")
    box = dialog.fields["theme"]
    box.setCurrentIndex(box.findData(theme))
    qtbot.mouseClick(dialog.apply_button, Qt.MouseButton.LeftButton)
    dialog.accept()


def test_dark_applies_at_once_to_the_messages_and_is_kept_across_a_restart(
    qtbot: Any, make_window: Any, desktop_palette: QPalette
) -> None:
    window = make_window(wait_loaded=False)
    assert window.settings["theme"] == "system" and not is_dark(window.palette())
    user = window.chat_view.add_message("user", "Show me some code")
    answer = window.chat_view.add_message("assistant", ANSWER, {"generated_tokens": 9})
    light_code = code_style(window.palette()).background
    qtbot.waitUntil(lambda: light_code in _texts(answer), timeout=3000)
    light_user = user.palette().color(QPalette.ColorRole.AlternateBase)

    _choose(qtbot, window, "dark")
    assert is_dark(QApplication.palette())
    qtbot.waitUntil(lambda: is_dark(window.palette()) and is_dark(answer.palette()), timeout=2000)  # Qt posts it
    dark_code = code_style(window.palette()).background
    assert dark_code != light_code
    qtbot.waitUntil(lambda: dark_code in _texts(answer) and light_code not in _texts(answer), timeout=3000)
    dark_user = user.palette().color(QPalette.ColorRole.AlternateBase)
    assert dark_user.lightness() < 100 < light_user.lightness()  # the user's message on a dark shade
    assert Settings.load()["theme"] == "dark"

    ThemeSwitch().apply("system")  # as a new run starts: the desktop's palette, until the window applies its theme
    again = make_window(wait_loaded=False)
    qtbot.waitUntil(lambda: is_dark(again.palette()), timeout=2000)
    assert again.settings["theme"] == "dark"
    assert again.preferences.open().fields["theme"].value() == "dark"

    _choose(qtbot, again, "system")  # the desktop's colours again, nothing pinned
    assert QApplication.palette().color(QPalette.ColorRole.Window) == desktop_palette.color(QPalette.ColorRole.Window)
    assert QApplication.palette().resolveMask() == 0
    assert Settings.load()["theme"] == "system"


@pytest.mark.parametrize("dark", [False, True])
def test_both_palettes_keep_the_transcripts_colours_readable(dark: bool) -> None:
    palette = theme_palette(dark)
    assert is_dark(palette) == dark

    def contrast(a: Any, b: Any) -> float:
        def lum(c: Any) -> float:
            def ch(v: float) -> float:
                return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

            return 0.2126 * ch(c.redF()) + 0.7152 * ch(c.greenF()) + 0.0722 * ch(c.blueF())

        high, low = sorted((lum(a), lum(b)), reverse=True)
        return (high + 0.05) / (low + 0.05)

    window, base = palette.color(QPalette.ColorRole.Window), palette.color(QPalette.ColorRole.Base)
    text = palette.color(QPalette.ColorRole.Text)
    assert contrast(text, base) >= 7 and contrast(palette.color(QPalette.ColorRole.WindowText), window) >= 7
    assert contrast(palette.color(QPalette.ColorRole.Highlight), window) >= 3  # the focus rings
    assert contrast(palette.color(QPalette.ColorRole.Link), base) >= 3
    assert contrast(text, palette.color(QPalette.ColorRole.AlternateBase)) >= 7  # the user's messages
    for drafter in ("model", "ngram", "mtp"):
        assert contrast(drafter_tint(drafter, palette), base) >= 2.5  # an underline, not text
