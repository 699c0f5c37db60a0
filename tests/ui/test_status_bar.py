"""The status bar: a llama.cpp build that is not SpecChat's is named once a run."""

from __future__ import annotations

from typing import Any

from desktop_app.engine_process.protocol import Ready
from desktop_app.ui.window.status_bar import EngineStatusBar

WARNING = "this llama-cpp-python is not SpecChat's build (no RPC backend: workers are unavailable): rebuild it"


def test_a_foreign_build_is_said_once_and_stays_marked(qtbot: Any) -> None:
    bar = EngineStatusBar(lambda: None)
    qtbot.addWidget(bar)
    bar.set_backend(Ready(1, "CPU", "CPU", "CPU", WARNING))
    assert bar.currentMessage().startswith("This llama-cpp-python is not SpecChat's build")
    assert bar.backend.text().startswith("⚠") and "no RPC backend" in bar.backend.toolTip()

    bar.clearMessage()
    bar.set_backend(Ready(2, "CPU", "CPU", "CPU", WARNING))  # the engine restarted
    assert bar.currentMessage() == ""
    assert bar.backend.text().startswith("⚠")


def test_specchat_s_own_build_shows_no_warning(qtbot: Any) -> None:
    bar = EngineStatusBar(lambda: None)
    qtbot.addWidget(bar)
    bar.set_backend(Ready(1, "CPU", "CPU", "CPU"))
    assert bar.currentMessage() == "" and bar.backend.text() == "CPU"
