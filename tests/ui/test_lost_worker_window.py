"""A worker killed mid-answer: one clear error, the partial answer kept, and the engine usable
again once the models are reloaded on this computer. Each test starts its own workers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from tests.remote.workers import start_worker
from tests.ui.conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS
from tests.ui.helpers import last_answer, send_and_wait, type_and_send


def test_the_window_keeps_the_answer_and_reloads_on_this_computer(
    qtbot: Any, make_window: Any, models: Any, tmp_path: Path
) -> None:
    workers = [start_worker(tmp_path), start_worker(tmp_path)]
    try:
        window = make_window(
            target_path=models.target,
            drafter="none",
            max_tokens=4000,
            workers=",".join(str(w.address) for w in workers),
        )
        status = window.status.models.text()
        assert (
            f"split: this computer: 2 layers, {workers[0].address}: 2 layers, {workers[1].address}: 2 layers" in status
        )
        assert f"RPC0 on {workers[0].address}" in window.status.models.toolTip()
        type_and_send(qtbot, window, "Write a very long story.")
        qtbot.waitUntil(lambda: len(last_answer(window).text) > 40, timeout=ANSWER_TIMEOUT_MS)
        with qtbot.waitSignal(window.client.engine_crashed, timeout=30_000) as crashed:
            workers[1].kill()
        reason = crashed.args[0]
        assert reason == f"Lost the connection to worker {workers[1].address} (it stopped, or the network dropped)"
        banner = window.banner
        assert banner.isVisible() and reason in banner.message.text()
        assert banner.local.isVisible()
        shown = last_answer(window).text
        assert len(shown) > 40 and f"interrupted: {reason}" in last_answer(window).footer.text()
        stored = window.history.messages(window.session.conversation_id)
        assert [m.role for m in stored] == ["user", "assistant"] and stored[-1].content == shown
        with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS) as loaded:
            qtbot.mouseClick(banner.local, Qt.MouseButton.LeftButton)
        assert loaded.args[0].target.placement == ""
        assert "split" not in window.status.models.text()
        assert window.settings["workers"]  # kept for the next load, when the worker is back
        done = send_and_wait(qtbot, window, "And now a short one.")
        assert done.stats.generated_tokens > 0
        assert [m.role for m in window.history.messages(window.session.conversation_id)] == ["user", "assistant"] * 2
    finally:
        for worker in workers:
            worker.kill()


def test_the_workers_dialog_names_what_is_wrong_and_allows_only_valid_lists(qtbot: Any) -> None:
    from PySide6.QtWidgets import QDialogButtonBox

    from desktop_app.ui.models.workers_dialog import WorkersDialog

    dialog = WorkersDialog("", "", None)
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert ok.isEnabled() and not dialog.problem.isVisibleTo(dialog)  # empty: this computer only
    dialog.workers.setText("192.168.1.20:abc")
    assert not ok.isEnabled()
    assert dialog.problem.text() == (
        "worker address '192.168.1.20:abc': worker_port must be a whole number between 1 and 65535, not 'abc'"
    )
    dialog.workers.setText("192.168.1.20, 192.168.1.21:50060")
    dialog.split.setText("1,2")
    assert not ok.isEnabled() and "split has 2 weights but there are 2 workers" in dialog.problem.text()
    dialog.split.setText("1,2,2")
    assert ok.isEnabled() and not dialog.problem.isVisibleTo(dialog)
