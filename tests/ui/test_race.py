"""The speed race: speculation off, then on, side by side."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from desktop_app.engine.stats import GenerationStats
from desktop_app.ui.race_dialog import speedup
from tests.ui.conftest import ANSWER_TIMEOUT_MS
from tests.ui.helpers import send_and_wait


def test_race_shows_both_answers_the_speedup_and_that_they_are_identical(
    qtbot: Any, make_window: Any, models: Any
) -> None:
    window = make_window(
        target_path=models.target, draft_path=models.draft, drafter="model", temperature=0.0, max_tokens=200
    )
    send_and_wait(qtbot, window, "Tell me a story")
    race_button = window.side.race
    assert race_button.objectName() == "raceButton" and race_button.isEnabled()
    qtbot.mouseClick(race_button, Qt.MouseButton.LeftButton)
    dialog = window.race_dialog
    assert dialog is not None and dialog.isVisible()
    with qtbot.waitSignal(dialog.race_finished, timeout=2 * ANSWER_TIMEOUT_MS) as done:
        pass
    result = done.args[0]
    assert result.off.mode == "off" and result.on.mode == "on"
    assert result.on.drafter == "model" and result.on.drafted > 0 and result.on.accepted > 0
    assert result.identical is True
    off_text, on_text = dialog.texts["off"].toPlainText(), dialog.texts["on"].toPlainText()
    assert off_text and off_text == on_text
    assert result.off.generated_tokens == result.on.generated_tokens > 0  # the same answer, token for token
    # Each lane shows its own measured speed, and the summary's factor is their ratio.
    off_speed, on_speed = result.off.decode_tokens_per_s, result.on.decode_tokens_per_s
    assert off_speed > 0 and on_speed > 0
    for lane, stats in (("off", result.off), ("on", result.on)):
        assert f"{stats.to_dict()['decode_tokens_per_s']:.1f} tok/s" in dialog.stats_labels[lane].text()
    assert result.speedup == pytest.approx(on_speed / off_speed)
    summary = dialog.summary.text()
    assert f"{on_speed / off_speed:.2f}× the speed of off" in summary and "identical text" in summary
    # the race does not touch the conversation
    assert len(window.chat_view.messages) == 2
    assert window.send_button.isEnabled()


def test_speedup_is_the_ratio_of_decode_speeds() -> None:
    def run(tokens: int, seconds: float) -> GenerationStats:
        return GenerationStats(generated_tokens=tokens, decode_s=seconds)

    assert speedup(run(50, 1.0), run(100, 1.0)) == 2.0
    assert speedup(run(0, 1.0), run(100, 1.0)) == 0.0
