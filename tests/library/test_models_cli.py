"""``specchat models ...`` end to end: a real subprocess against the local hub."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_app.cli import main
from tests.library.conftest import REPO
from tests.library.hub_server import FakeHub

ROOT = Path(__file__).resolve().parents[2]


def specchat(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "desktop_app", *args], cwd=ROOT, env={**os.environ, **env},
        capture_output=True, text=True, timeout=120,
    )


def test_pull_downloads_verifies_lists_and_the_engine_loads_it(hub: FakeHub, tmp_path: Path, models) -> None:
    hub.add_file(REPO, "tiny-draft-Q8_0.gguf", models.draft)
    env = {"HF_ENDPOINT": hub.endpoint, "SPECCHAT_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "0"}

    pulled = specchat("models", "pull", REPO, "tiny-draft-Q8_0.gguf", env=env)

    assert pulled.returncode == 0, pulled.stderr
    path = Path(pulled.stdout.strip().splitlines()[-1])
    assert path == tmp_path / "home" / "data" / "models" / "tiny-draft-Q8_0.gguf"
    assert "verified SHA-256" in pulled.stderr and "100%" in pulled.stderr

    listed = specchat("models", "list", "--json", env=env)
    (entry,) = json.loads(listed.stdout)["models"]
    assert entry["path"] == str(path) and entry["architecture"] == "llama" and entry["error"] is None
    table = specchat("models", "list", env=env).stdout
    assert "tiny-draft-Q8_0.gguf" in table and "Q8_0" in table and "4096" in table

    from desktop_app.engine import Engine

    as_target = Engine()
    try:
        assert as_target.load_target(path) is not None
    finally:
        as_target.close()
    with_draft = Engine()
    try:
        with_draft.load_target(models.target)
        assert with_draft.load_draft(path).compatible
    finally:
        with_draft.close()


def test_pull_errors_are_one_line_and_exit_1(hub: FakeHub, tmp_path: Path) -> None:
    hub.add_file(REPO, "there.gguf", b"GGUF")
    env = {"HF_ENDPOINT": hub.endpoint, "SPECCHAT_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "0"}

    missing = specchat("models", "pull", REPO, "missing.gguf", env=env)

    assert missing.returncode == 1
    assert missing.stderr.strip().splitlines() == [f"specchat: error: missing.gguf not found in {REPO} at revision 'main' (HTTP 404)"]


def test_pair_says_compatible_or_why_not(models, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "pair", str(models.target), str(models.draft)]) == 0
    assert capsys.readouterr().out.startswith("compatible: draft.gguf can draft for target.gguf")

    assert main(["models", "pair", str(models.target), str(models.draft_other_vocab)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("not compatible") and "token 300 differs" in out

    assert main(["models", "pair", str(models.target), "/nonexistent/x.gguf"]) == 1
    assert "not found" in capsys.readouterr().err


def test_list_with_an_empty_library_says_how_to_download(models_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert "No models in" in out and "specchat models pull" in out


def test_catalog_prints_pull_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "catalog"]) == 0
    out = capsys.readouterr().out
    assert "specchat models pull bartowski/Qwen2.5-0.5B-Instruct-GGUF Qwen2.5-0.5B-Instruct-Q8_0.gguf" in out
