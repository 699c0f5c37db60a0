"""``specchat bench`` end to end on the factory pair (tiny prompt set)."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_app.bench.runner import load_prompts


def test_bench_writes_report_and_chart(models, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts.json"
    prompts.write_text(json.dumps({"chat": ["Hello there"], "code": ["Write a loop"]}))
    out = subprocess.run(
        [sys.executable, "-m", "desktop_app", "bench", "--target", str(models.target), "--draft", str(models.draft),
         "--prompts", str(prompts), "--max-tokens", "16", "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "out" / "bench.json").read_text())
    assert set(report["summary"]) == {"chat", "code"}
    for entry in report["summary"].values():
        assert entry["identical_at_t0"] is True
        assert entry["off"]["median_tokens_per_s"] > 0
        assert entry["model:k4"]["acceptance"] > 0  # the factory draft agrees with its target
        assert "vs_best_fixed" in entry["auto"] and entry["auto"]["accepted_by_drafter"]
    drafters = ("model", "ngram", "ngram-map", "ngram-cache")  # the default: every drafter, Auto among them
    assert {r["mode"] for r in report["runs"]} == {"off", "auto", *(f"{d}:k{k}" for d in drafters for k in (2, 4, 8))}
    png = (tmp_path / "out" / "bench.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (900, 480)
    assert "| chat |" in out.stdout


def test_a_multi_turn_category_runs_from_a_fresh_and_from_a_warm_cache(models, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts.json"
    conversation = ["Write a list of fruits.", "Repeat that list and add two more fruits."]
    prompts.write_text(json.dumps({"chat": ["Hello there"], "multi-turn": [conversation]}))
    out = subprocess.run(
        [sys.executable, "-m", "desktop_app", "bench", "--target", str(models.target), "--prompts", str(prompts),
         "--max-tokens", "12", "--draft-max", "4", "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "out" / "bench.json").read_text())["summary"]
    assert list(summary) == ["multi-turn (fresh cache)", "chat", "multi-turn (warm cache)"]
    assert all(entry["identical_at_t0"] for entry in summary.values())
    assert "| multi-turn (warm cache) |" in out.stdout


def test_bad_prompt_files_are_explained(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not found"):
        load_prompts(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"chat": "not a list"}))
    with pytest.raises(ValueError, match="must map category names"):
        load_prompts(bad)


def test_shipped_prompt_set_covers_the_categories() -> None:
    prompts = load_prompts(None)
    assert {"chat", "code", "math", "rewrite", "translation", "multi-turn"} <= set(prompts)
    assert all(isinstance(c, list) and len(c) >= 2 for c in prompts["multi-turn"])
    assert any(any("\uac00" <= ch <= "\ud7a3" for ch in p) for p in prompts["translation"])  # Korean
