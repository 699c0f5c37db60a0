"""The model library counts what it lists (the built-in model too, words in the plural only for
more than one) and its Compatibility tab says what it shows, and why it is empty (issue 49,
item 11)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pytestqt")

from desktop_app.library.summary import counted  # noqa: E402
from desktop_app.ui.models.model_library import ModelLibraryWindow  # noqa: E402


def _library(qtbot: Any) -> ModelLibraryWindow:
    window = ModelLibraryWindow()
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.refreshed, timeout=20_000):
        window.refresh()
    return window


def test_the_built_in_model_is_counted_and_the_empty_compatibility_tab_says_why(
    qtbot: Any,
    models_dir: Path,
    models: Any,
) -> None:
    window = _library(qtbot)
    assert [m.builtin for m in window.models] == [True]
    assert window.status.text() == "1 model (built in) · no draft/target pairs fit"
    window.tabs.setCurrentIndex(1)
    window.resize(900, 500)
    window.show()
    qtbot.waitExposed(window)
    note = window.compat_note
    assert note.isVisible() and window.compat_table.rowCount() == 0
    assert "a draft model speeds the target up only when both share a vocabulary" in note.text()
    assert "No model files yet" in note.text() and "built-in demo model is not paired" in note.text()
    if os.environ.get("SPECCHAT_SHOTS"):
        window.grab().save(os.path.join(os.environ["SPECCHAT_SHOTS"], "compatibility-empty.png"))

    shutil.copy(models.draft, models_dir / "draft.gguf")
    with qtbot.waitSignal(window.refreshed, timeout=20_000):
        window.refresh()
    assert window.status.text() == "2 models (1 built in) · no draft/target pairs fit"
    assert "Only 1 model file: a pair needs two" in note.text()

    shutil.copy(models.target, models_dir / "target.gguf")
    with qtbot.waitSignal(window.refreshed, timeout=20_000):
        window.refresh()
    assert window.status.text() == "3 models (1 built in) · 1 draft/target pair fits"
    assert window.compat_table.rowCount() >= 1 and "No model files" not in note.text()


def test_counted_words() -> None:
    assert [counted(n, "model") for n in (0, 1, 2, 1000)] == ["no models", "1 model", "2 models", "1,000 models"]
