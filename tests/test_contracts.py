"""The import contracts of issue 47, checked from the source as well as by ``lint-imports``
(pyproject.toml): only the llama.cpp layer imports llama_cpp, the contract that keeps the
engine's sub-packages behind its faces covers every part of the app (with no exceptions), and
the window's modules and the model library load no llama.cpp into the window's process."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import desktop_app
import desktop_app.engine

APP = Path(desktop_app.__file__).parent
LLAMA_LAYER = APP / "engine" / "llama"
ROOT = APP.parent
FACES_CONTRACT = "Outside the engine, its sub-packages are reached through its faces"
ENGINE_HOSTS = {"desktop_app.engine", "desktop_app.engine_process", "desktop_app.worker"}  # not sources: see pyproject


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """Every module a file imports: import statements, and importlib.import_module / __import__
    of a literal name."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                found.append((node.lineno, node.args[0].value))
    return found


def test_only_the_llama_cpp_layer_imports_llama_cpp() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in sorted(APP.rglob("*.py"))
        if not path.is_relative_to(LLAMA_LAYER)
        for line, module in _imported_modules(ast.parse(path.read_text(encoding="utf-8")))
        if module == "llama_cpp" or module.startswith("llama_cpp.")
    ]
    assert offenders == [], "llama_cpp is imported outside desktop_app/engine/llama/ (go through desktop_app.engine)"


def test_the_walk_sees_every_kind_of_import() -> None:
    code = "import llama_cpp\nfrom llama_cpp.llama_grammar import x\nimportlib.import_module('llama_cpp')\n"
    assert [m for _line, m in _imported_modules(ast.parse(code))] == [
        "llama_cpp",
        "llama_cpp.llama_grammar",
        "llama_cpp",
    ]


def test_the_faces_contract_covers_every_part_of_the_app() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [contract] = [c for c in config["tool"]["importlinter"]["contracts"] if c["name"] == FACES_CONTRACT]
    parts = {f"desktop_app.{p.stem if p.is_file() else p.name}" for p in APP.iterdir() if _is_module(p)}
    parts -= {"desktop_app.__init__"}

    assert parts - ENGINE_HOSTS == set(contract["source_modules"])


def _is_module(path: Path) -> bool:
    return path.suffix == ".py" if path.is_file() else (path / "__init__.py").is_file()


def test_every_name_the_engines_face_exports_is_there() -> None:
    missing = [name for name in desktop_app.engine.__all__ if not hasattr(desktop_app.engine, name)]
    assert missing == []


def test_the_faces_contract_has_no_exceptions() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [contract] = [c for c in config["tool"]["importlinter"]["contracts"] if c["name"] == FACES_CONTRACT]
    assert contract.get("ignore_imports", []) == []


def test_the_window_and_the_library_load_no_llama_cpp() -> None:
    """Every module of the window (desktop_app.ui, main_window first) and of the model library,
    imported in a fresh process: llama.cpp runs in the engine's process and the library's
    children, never in the window's."""
    code = (
        "import importlib, pkgutil, sys\n"
        "import desktop_app.ui.main_window, desktop_app.library, desktop_app.ui\n"
        "for package in (desktop_app.library, desktop_app.ui):\n"
        "    for module in pkgutil.walk_packages(package.__path__, package.__name__ + '.'):\n"
        "        importlib.import_module(module.name)\n"
        "print(sorted(m for m in sys.modules if m == 'llama_cpp' or m.startswith('llama_cpp.')))\n"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=180, env=env, cwd=ROOT
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["[]"], "an import loads llama_cpp into the window's process"
