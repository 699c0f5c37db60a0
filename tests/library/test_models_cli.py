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
        [sys.executable, "-m", "desktop_app", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
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
    assert missing.stderr.strip().splitlines() == [
        f"specchat: error: missing.gguf not found in {REPO} at revision 'main' (HTTP 404)"
    ]


@pytest.mark.parametrize("filename", ["", ".", ".."], ids=["empty", "dot", "dot-dot"])
def test_pull_of_a_name_that_is_a_folder_is_refused(hub: FakeHub, tmp_path: Path, filename: str) -> None:
    # These once printed "... is already in the library" and exited 0: the name was the models folder.
    env = {"HF_ENDPOINT": hub.endpoint, "SPECCHAT_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "0"}
    (tmp_path / "home" / "data" / "models").mkdir(parents=True)

    out = specchat("models", "pull", REPO, filename, env=env)

    assert out.returncode == 1 and "already in the library" not in out.stderr
    assert out.stderr.strip().splitlines() == [
        f"specchat: error: file name {filename!r} {'is empty' if not filename else 'is a folder, not a name'}"
    ]
    assert hub.requests == []


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
    assert "specchat models pull Qwen/Qwen2.5-0.5B-Instruct-GGUF qwen2.5-0.5b-instruct-q8_0.gguf" in out
    # a file in a repo folder is pulled by its path in the repo
    assert "specchat models pull unsloth/gemma-4-12B-it-qat-GGUF MTP/mtp-gemma-4-12B-it-Q8_0.gguf" in out


def test_a_vision_pair_s_projector_is_pulled_under_its_target_s_name(
    hub: FakeHub, tmp_path: Path, capsys: pytest.CaptureFixture[str], vision_model
) -> None:
    assert main(["models", "catalog"]) == 0
    gemma = capsys.readouterr().out.split("gemma-3-12b-it  (", 1)[1].split("\n\n")[0]
    command = next(line for line in gemma.splitlines() if line.strip().startswith("vision"))
    assert command.endswith(
        "854.2 MB  specchat models pull ggml-org/gemma-3-12b-it-GGUF mmproj-model-f16.gguf "
        "--save-as mmproj-gemma-3-12b-it-Q4_K_M.gguf"
    )
    hub.add_file("ggml-org/gemma-3-12b-it-GGUF", "mmproj-model-f16.gguf", vision_model.mmproj)
    env = {"HF_ENDPOINT": hub.endpoint, "SPECCHAT_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "0"}

    pulled = specchat(*command.split("specchat ", 1)[1].split(), env=env)

    assert pulled.returncode == 0, pulled.stderr
    path = Path(pulled.stdout.strip().splitlines()[-1])
    assert path == tmp_path / "home" / "data" / "models" / "mmproj-gemma-3-12b-it-Q4_K_M.gguf" and path.is_file()
    assert "note: a vision projector (mmproj), not a model" in pulled.stderr and "warning" not in pulled.stderr


def test_catalog_shows_each_pairs_drafting_method_size_and_ram(capsys: pytest.CaptureFixture[str]) -> None:
    from desktop_app.library.catalog import load_catalog

    assert main(["models", "catalog"]) == 0
    out = capsys.readouterr().out
    blocks = {block.split()[0]: block for block in out.split("\n") if block and not block.startswith(" ")}
    pairs = load_catalog()
    assert set(blocks) == {p.id for p in pairs}
    for pair in pairs:
        section = out.split(pair.id + "  (", 1)[1].split("\n\n")[0]
        drafting_line = next(line for line in section.splitlines() if line.strip().startswith("drafting:"))
        assert f"drafting: {pair.drafting} ({pair.drafting_label})" in drafting_line
        assert f"download {pair.download_text}" in drafting_line and f"RAM/VRAM {pair.ram_text}" in drafting_line
    mtp = out.split("qwen3.6-27b-mtp  (", 1)[1].split("\nqwen3.6-35b", 1)[0]
    assert "drafting: mtp (Built-in drafter)" in mtp and "  target" in mtp and "  draft " not in mtp
    assert "~80.0 MB  specchat models pull unsloth/gemma-4-E4B-it-GGUF mtp-gemma-4-E4B-it.gguf" in out


def test_catalog_json_carries_the_drafting_method_sizes_and_ram(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "catalog", "--json"]) == 0
    entries = {e["id"]: e for e in json.loads(capsys.readouterr().out)}
    assert {e["drafting"] for e in entries.values()} == {"model", "mtp", "assistant", "ngram"}
    mtp = entries["qwen3.6-27b-mtp"]
    assert mtp["draft"] is None and mtp["target"]["size_bytes"] == 17_106_773_120
    assert mtp["ram_gb"] > mtp["download_bytes"] / 1e9
    assistant = entries["gemma-4-31b-it"]
    assert (
        assistant["draft"]["file"] == "mtp-gemma-4-31B-it-Q8_0.gguf" and assistant["draft"]["size_bytes"] == 514_687_104
    )


def test_list_passes_over_a_symlink_loop_and_lists_the_rest(tmp_path: Path, models) -> None:
    models_dir = tmp_path / "home" / "data" / "models"
    models_dir.mkdir(parents=True)
    (models_dir / "draft.gguf").write_bytes(models.draft.read_bytes())
    (models_dir / "loop").symlink_to(models_dir / "loop")
    (models_dir / "loop.gguf").symlink_to(models_dir / "loop.gguf")
    (models_dir / "parent").symlink_to(models_dir.parent, target_is_directory=True)

    out = specchat("models", "list", env={"SPECCHAT_HOME": str(tmp_path / "home")})

    assert out.returncode == 0 and out.stderr == ""
    assert "draft.gguf" in out.stdout and f"1 file(s) in {models_dir}" in out.stdout
