"""The bundle and CI install exactly the locked versions (packaging/README.md, "Locked versions"),
the locks still satisfy pyproject.toml, and the Windows instructions name every llama.cpp patch."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "packaging" / "requirements.lock"
TEST_LOCK = ROOT / "packaging" / "requirements-test.lock"
LLAMA = "llama-cpp-python"


def _pins(lock: Path) -> dict[str, list[Requirement]]:
    """Each locked package's lines (one per marker where the version differs by platform or Python)."""
    pins: dict[str, list[Requirement]] = {}
    for line in lock.read_text().splitlines():
        if line.strip() and not line.startswith((" ", "#")):
            req = Requirement(line)
            pins.setdefault(canonicalize_name(req.name), []).append(req)
    return pins


def _pyproject() -> dict[str, list[Requirement]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    runtime = [Requirement(r) for r in project["dependencies"]]
    return {
        "runtime": runtime,
        "package": runtime + [Requirement(r) for r in extras["package"]],
        "test": runtime + [Requirement(r) for r in extras["test"] + extras["package"]],
    }


@pytest.mark.parametrize("lock", [LOCK, TEST_LOCK], ids=lambda p: p.name)
def test_every_line_is_an_exact_pin_and_llama_is_left_to_the_build(lock: Path) -> None:
    pins = _pins(lock)
    loose = [str(r) for reqs in pins.values() for r in reqs if len(r.specifier) != 1 or "==" not in str(r.specifier)]
    assert loose == []
    assert LLAMA not in pins, f"{lock.name} must not make pip fetch {LLAMA}: the Makefile builds it, patched"


@pytest.mark.parametrize(("lock", "needs"), [(LOCK, "package"), (TEST_LOCK, "test")], ids=["app", "test"])
def test_the_lock_satisfies_pyproject(lock: Path, needs: str) -> None:
    """A pin moved in pyproject.toml without `make lock` fails here, not in pip's resolver."""
    pins, env = _pins(lock), default_environment()
    unmet = []
    for req in _pyproject()[needs]:
        name = canonicalize_name(req.name)
        if name == canonicalize_name(LLAMA) or (req.marker and not req.marker.evaluate(env)):
            continue
        here = [p for p in pins.get(name, []) if not p.marker or p.marker.evaluate(env)]
        if not here or not req.specifier.contains(next(iter(here[0].specifier)).version, prereleases=True):
            unmet.append(f"{req} (locked: {[str(p) for p in pins.get(name, [])]})")
    assert unmet == [], "run `make lock`"


def test_the_app_lock_says_the_test_locks_versions() -> None:
    """The bundle ships the versions CI tested."""
    app, test = _pins(LOCK), _pins(TEST_LOCK)
    differ = {
        name: (app[name], test.get(name))
        for name in app
        if {str(r) for r in app[name]} - {str(r) for r in test.get(name, [])}
    }
    assert differ == {}


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize(
    ("target", "lock"), [(".venv/.app", LOCK), (".venv/.test", TEST_LOCK), (".venv/.package", LOCK)]
)
def test_every_install_takes_the_lock(target: str, lock: Path) -> None:
    commands = subprocess.run(
        ["make", "-n", "-B", f"PYTHON={sys.executable}", target], cwd=ROOT, capture_output=True, text=True, timeout=60
    ).stdout
    installs = [c for c in commands.splitlines() if re.search(r"pip install (?!.*--no-deps|.*--upgrade pip)", c)]
    assert installs and all(re.search(r" -c packaging/requirements(-test)?\.lock ", c) for c in installs), installs
    assert f"-c {lock.relative_to(ROOT)}" in installs[-1]  # the target's own install


def test_the_windows_instructions_name_every_patch() -> None:
    readme = (ROOT / "packaging" / "README.md").read_text()
    patches = sorted(p.name for p in (ROOT / "packaging" / "llama").glob("*.patch"))
    assert patches and [p for p in patches if f"`{p}`" not in readme] == []
    assert "packaging\\llama\\*.patch" in readme  # and the command applies them all, by glob
