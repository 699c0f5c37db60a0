"""Issue 49, point 5: one speed. While an answer streams, its footer and the speed panel's dial
show the same figure (the answer's decode tokens/s so far), the words under the sparkline are
that answer's, and the dial's scale follows one rule (the first of SCALES at or above the live
speed and the recent answers' speeds), started afresh when the model changes: a tiny fast model
no longer leaves a slow one on a 0-1000 dial."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from desktop_app.ui.speed.speed_gauge import SCALES, dial_scale
from tests.ui.conftest import LOAD_TIMEOUT_MS
from tests.ui.helpers import last_answer, next_answer, type_and_send


def stream_and_sample(qtbot: Any, window: Any, text: str, shot: str = "") -> list[tuple[str, str, str, str, float]]:
    """Send ``text``; while its answer streams, what the footer and the panel show: (footer's
    speed, dial's figure, footer, words under the sparkline, the speed the scale is for);
    ``shot``: the window's picture mid-answer, in $SPECCHAT_SHOTS when set."""
    gauge, samples = window.side.gauge, []
    with next_answer(qtbot, window.client) as watch:
        type_and_send(qtbot, window, text)
        while not watch.ended:
            qtbot.wait(20)
            footer = last_answer(window).footer.text()
            if window.session.busy and gauge.caption == "live" and "tokens/s" in footer:
                top = max([gauge.value(), *gauge.recent])
                assert gauge.scale() == dial_scale(top)  # the one rule, at every moment
                samples.append((footer.split(" tokens/s")[0], gauge.text(), footer, window.side.detail.text(), top))
                if shot and len(samples) == 5 and os.environ.get("SPECCHAT_SHOTS"):
                    window.grab().save(str(Path(os.environ["SPECCHAT_SHOTS"]) / shot))
    qtbot.waitUntil(lambda: not window.session.busy)
    return samples


def test_the_footer_and_the_dial_show_one_speed_on_one_scale(qtbot: Any, make_window: Any, models: Any) -> None:
    assert list(SCALES) == sorted(SCALES) and dial_scale(0) == SCALES[0] and dial_scale(10**9) == SCALES[-1]
    assert dial_scale(17.8) == 20 and dial_scale(20) == 20 and dial_scale(20.1) == 50
    # a tiny, fast model first
    window = make_window(target_path=models.target, drafter="none", max_tokens=400, side_panel="shown")
    window.resize(1280, 800)
    gauge = window.side.gauge
    stream_and_sample(qtbot, window, "Tell me about the sea.")
    fast = gauge.value()
    assert gauge.caption == "last answer" and list(gauge.recent) == [fast]
    assert gauge.text() in last_answer(window).footer.text().split(" tokens/s")[0]
    assert window.side.detail.text() == last_answer(window).footer.text()
    fast_scale = gauge.scale()
    assert fast_scale == dial_scale(fast)
    # another model: the dial starts afresh (no recent answers, the smallest scale) ...
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS):
        window.model_bar.choose_target("")  # the built-in model, slow enough here to sample
    assert list(gauge.recent) == [] and gauge.value() == 0 and gauge.scale() == SCALES[0]
    assert gauge.caption == "idle" and window.side.detail.text() == ""
    window.session.open(None)
    samples = stream_and_sample(qtbot, window, "Tell me about the sea.", shot="one_speed_live.png")
    assert len(samples) >= 3
    for footer_speed, dial, footer, words, _top in samples:
        assert footer_speed == dial  # one figure, written the same
        assert words == footer  # the words under the sparkline are this answer's
    if os.environ.get("SPECCHAT_SHOTS"):
        window.grab().save(str(Path(os.environ["SPECCHAT_SHOTS"]) / "one_speed_final.png"))
    slow = gauge.value()
    assert list(gauge.recent) == [slow] and gauge.scale() == dial_scale(slow) < fast_scale
