"""The window with a hybrid target that carries its own MTP head, and one that cannot roll back."""

from __future__ import annotations

from typing import Any

from tests.ui.helpers import last_answer, send_and_wait


def test_a_target_with_mtp_layers_drafts_with_them_by_default(qtbot: Any, make_window: Any, hybrid_models: Any) -> None:
    window = make_window(target_path=hybrid_models.hybrid_mtp, spec_mode="on", draft_max=2, max_tokens=40)
    assert window.settings["drafter"] == "best"
    assert "Built-in drafter" in window.model_bar.status.toolTip()
    assert "built-in MTP layers" in window.model_bar.status.toolTip()
    done = send_and_wait(qtbot, window, "Tell me a story about a robot.")
    assert done.stats.drafter == "mtp" and done.stats.drafted > 0 and done.stats.accepted > 0
    drafted, accepted = done.stats.by_drafter["mtp"]
    assert f"built-in drafter drafted {drafted} tokens, {accepted} were right" in last_answer(window).footer.text()


def test_a_target_that_cannot_roll_back_says_why_and_chats(qtbot: Any, make_window: Any, hybrid_models: Any) -> None:
    window = make_window(target_path=hybrid_models.no_rollback, spec_mode="on", max_tokens=12)
    assert window.model_bar.status.text().endswith("(speculation unavailable)")
    assert "cannot roll back" in window.model_bar.status.toolTip()
    done = send_and_wait(qtbot, window, "Hello")
    assert done.stats.drafter == "none" and done.stats.generated_tokens == 12
    assert last_answer(window).text
