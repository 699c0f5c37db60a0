"""The engine, the store and the model manager (library) never import Qt (the GUI is a client of them)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "desktop_app"
QT_FREE = ("engine", "store", "library")
FORBIDDEN = ("PySide6", "PyQt5", "PyQt6", "shiboken6", "qtpy", "pytestqt", "desktop_app.ui")


def qt_imports(source: str) -> list[str]:
    """Module names imported by ``source`` that belong to Qt or the GUI layer."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module",
            "__import__",
        ):
            names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        found += [n for n in names if n.split(".")[0] in FORBIDDEN or n.startswith("desktop_app.ui")]
    return found


@pytest.mark.parametrize("package", QT_FREE)
def test_core_packages_do_not_import_qt(package: str) -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): qt_imports(path.read_text(encoding="utf-8"))
        for path in (PACKAGE / package).rglob("*.py")
    }
    offenders = {k: v for k, v in offenders.items() if v}
    assert not offenders, f"Qt imported in a Qt-free package: {offenders}"


def test_the_check_catches_a_qt_import(tmp_path: Path) -> None:
    # The guard must fail when someone adds a Qt import to engine/: prove it on such code.
    assert qt_imports("from PySide6.QtCore import QObject\n") == ["PySide6.QtCore"]
    assert qt_imports("import PySide6.QtWidgets as w\n") == ["PySide6.QtWidgets"]
    assert qt_imports("import importlib\nimportlib.import_module('PySide6.QtGui')\n") == ["PySide6.QtGui"]
    assert qt_imports("from desktop_app.ui.chat_view import ChatView\n") == ["desktop_app.ui.chat_view"]
    assert qt_imports("import numpy\nfrom desktop_app.engine import Engine\n") == []


def test_importing_the_engine_and_store_loads_no_qt() -> None:
    code = (
        "import sys, desktop_app.engine, desktop_app.store, desktop_app.library, desktop_app.models_cli, desktop_app.cli;"
        "bad=[m for m in sys.modules if m.startswith(('PySide6','shiboken6'))];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
