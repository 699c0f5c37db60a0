"""The first answer after a model loads does not wait for Auto's measurement: in the real window,
a fresh home, the built-in model, a message sent the moment the model is loaded (while the
engine measures this machine in the background) shows its first token within a second of what
plain decoding takes (before, the answer waited for the whole measurement: 95-142 s on a busy
machine, issue 45)."""

from __future__ import annotations

from typing import Any

from tests.ui.helpers import send_and_wait


def test_auto_s_first_answer_after_a_load_starts_as_soon_as_off_s(qtbot: Any, make_window: Any) -> None:
    # Auto first, in a fresh home: nothing measured yet, the measurement starts with the load
    auto_window = make_window(spec_mode="auto", max_tokens=16)
    auto = send_and_wait(qtbot, auto_window, "Write a short poem about a cat.")
    auto_window.close()
    off_window = make_window(spec_mode="off", max_tokens=16)
    off = send_and_wait(qtbot, off_window, "Write a short poem about a cat.")
    assert auto.stats.mode.value == "auto" and off.stats.mode.value == "off"
    # ttft_s counts from Send in the window
    assert auto.stats.ttft_s <= off.stats.ttft_s + 1.0, (auto.stats.ttft_s, off.stats.ttft_s)
