"""The speed race: without speculation and with the user's choice, in turns, side by side."""

from __future__ import annotations

import statistics
from typing import Any

import pytest
from PySide6.QtCore import Qt

from desktop_app.bench.race import RaceResult, speedup
from desktop_app.engine.api import DrafterKind, SpecMode
from desktop_app.engine.stats import GenerationStats
from tests.ui.conftest import ANSWER_TIMEOUT_MS
from tests.ui.helpers import last_answer, send_and_wait


def test_the_race_alternates_off_and_auto_and_reports_the_median_and_spread(
    qtbot: Any, make_window: Any, models: Any
) -> None:
    window = make_window(
        target_path=models.target, draft_path=models.draft, spec_mode="auto", temperature=0.0, max_tokens=60
    )
    done = send_and_wait(qtbot, window, "Tell me a story")
    gauge = window.side.gauge
    chat_speed, chat_detail = gauge.value(), window.side.detail.text()
    assert chat_speed == done.stats.decode_tokens_per_s
    race_button = window.side.race
    assert race_button.objectName() == "raceButton" and race_button.isEnabled()
    qtbot.mouseClick(race_button, Qt.MouseButton.LeftButton)
    dialog = window.race_dialog
    assert dialog is not None and dialog.isVisible()
    with qtbot.waitSignal(dialog.race_finished, timeout=6 * ANSWER_TIMEOUT_MS) as finished:
        pass
    result: RaceResult = finished.args[0]
    # the user's mode, Auto with the best drafter (the draft model), against off, three times in turns
    assert [r.spec for r in dialog.requests] == [SpecMode.OFF, SpecMode.AUTO] * 3
    assert [r.drafter for r in dialog.requests] == [None, DrafterKind.MODEL] * 3
    assert [s.mode for s in result.off] == ["off"] * 3 and [s.mode for s in result.chosen] == ["auto"] * 3
    ratios = [on.decode_tokens_per_s / off.decode_tokens_per_s for off, on in zip(result.off, result.chosen)]
    assert result.speedup == pytest.approx(statistics.median(ratios))
    assert result.spread == pytest.approx((min(ratios), max(ratios)))
    summary = dialog.summary.text()
    assert summary.startswith("Auto (draft model): ") and "without speculation (median of 3 rounds; " in summary
    assert f"{min(ratios):.2f}–{max(ratios):.2f}x per round" in summary
    assert result.identical and "the same text every run" in summary  # greedy: speculation changes no token
    assert dialog.titles["chosen"].text() == "With Auto (draft model)"
    off_median = statistics.median(s.decode_tokens_per_s for s in result.off)
    assert f"median: {off_median:.1f} tokens/s" in dialog.stats_labels["off"].text()
    # the race never touches the chat's gauge nor its last answer's figures; the panel keeps the verdict
    assert gauge.value() == chat_speed and gauge.caption == "last answer"
    assert window.side.detail.text() == chat_detail
    assert window.side.race_verdict.text() == result.verdict()
    assert len(window.chat_view.messages) == 2
    assert window.send_button.isEnabled()
    # the raced answer's footer gives the measured speed-up, named for what measured it (and keeps it)
    low, high = result.spread
    raced = f" without speculation in a race of 3 ({low:.1f}–{high:.1f}x per round)"  # "faster than", "as fast as"
    assert raced in last_answer(window).footer.text()
    assert window.history.messages(window.session.conversation_id)[-1].stats["race"]["rounds"] == 3
    # after the race, typing goes to the message box (not into a setting)
    dialog.close()
    qtbot.waitUntil(lambda: window.focusWidget() is window.input, timeout=5000)
    draft_max = window.settings["draft_max"]
    qtbot.keyClicks(window.focusWidget(), "3")
    assert window.input.toPlainText() == "3" and window.settings["draft_max"] == draft_max


def test_a_race_of_model_text_shows_it_as_text(qtbot: Any, make_window: Any, models: Any) -> None:
    """Model output is shown as written: the race's panes and labels never read it as HTML."""
    window = make_window(target_path=models.target, spec_mode="off", max_tokens=20)
    send_and_wait(qtbot, window, "Hi")
    window.start_race()
    dialog = window.race_dialog
    assert dialog is not None
    dialog._on_failed("<b>bold</b> & <i>gone</i>")  # an error naming markup
    assert dialog.summary.text() == "Race stopped: <b>bold</b> & <i>gone</i>"
    assert dialog.summary.textFormat() == Qt.TextFormat.PlainText
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in dialog.stats_labels.values())


def test_speedup_is_the_ratio_of_decode_speeds_and_the_verdict_the_median() -> None:
    def run(tokens: int, seconds: float) -> GenerationStats:
        return GenerationStats(generated_tokens=tokens, decode_s=seconds)

    assert speedup(run(50, 1.0), run(100, 1.0)) == 2.0
    assert speedup(run(0, 1.0), run(100, 1.0)) == 0.0
    result = RaceResult("Auto", (run(50, 1), run(40, 1), run(60, 1)), (run(100, 1), run(60, 1), run(150, 1)), True)
    assert result.ratios == [2.0, 1.5, 2.5] and result.speedup == 2.0 and result.spread == (1.5, 2.5)
    assert result.verdict() == (
        "Auto: 2.00x faster than without speculation (median of 3 rounds; 1.50–2.50x per round; 100.0 vs 50.0 tokens/s)"
    )
    slow = RaceResult("Auto", (run(100, 1),), (run(50, 1),), True)
    assert slow.verdict().startswith("Auto: 2.00x slower than without speculation (median of 1 round;")
