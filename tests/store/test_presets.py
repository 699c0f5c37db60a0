"""Answer presets (store/presets.py): checked with the engine's ranges; a bad file is set aside, nothing lost."""

from __future__ import annotations

import json
from pathlib import Path

from desktop_app.engine.api import SpecMode
from desktop_app.store.presets import PRESETS_FILE, AnswerPreset, Presets, own_settings


def test_a_preset_is_checked_with_the_engine_ranges(tmp_path: Path) -> None:
    good = AnswerPreset(0.5, 0.9, 40, 128, SpecMode.AUTO, "Hi")
    assert AnswerPreset.from_dict(good.to_dict(), "x") == AnswerPreset(0.5, 0.9, 40, 128, SpecMode.AUTO, "Hi", "x")
    assert own_settings({**good.option(), "top_p": 0}) is None  # top-p must be above 0: the defaults
    path = tmp_path / PRESETS_FILE
    path.write_text("{not json")
    presets = Presets.load(path)
    assert presets.names() == [] and presets.problem and "not JSON" in presets.problem
    assert not path.exists() and next(tmp_path.glob(f"{PRESETS_FILE}.broken-*")).read_text() == "{not json"


def test_a_bad_entry_is_set_aside_with_the_file_and_the_good_ones_kept(tmp_path: Path) -> None:
    path = tmp_path / PRESETS_FILE
    good = AnswerPreset(0.5, 0.9, 40, 128, SpecMode.OFF).to_dict()
    path.write_text(json.dumps({"Good": good, "Bad": {**good, "spec_mode": "sometimes"}}))
    presets = Presets.load(path)
    assert presets.names() == ["Good"] and presets.problem and "spec_mode must be one of" in presets.problem
    assert json.loads(path.read_text()) == {"Good": good}  # rewritten with the usable ones
    assert "sometimes" in next(tmp_path.glob(f"{PRESETS_FILE}.broken-*")).read_text()
    presets.add("Second", AnswerPreset.from_dict(good))
    presets.rename("Good", "First")
    presets.delete("Second")
    assert Presets.load(path).names() == ["First"]
