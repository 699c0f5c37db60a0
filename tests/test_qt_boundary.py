"""The layers hold at run time too: the window's side of the engine loads no llama.cpp, and the
engine, the store and the library load no Qt. (The import contracts in pyproject.toml, run by
``make test`` through ``lint-imports``, check the same statically for every module.)"""

from __future__ import annotations

import subprocess
import sys


def _loaded_after(imports: str, prefixes: tuple[str, ...]) -> list[str]:
    code = f"import sys; {imports}; print(sorted(m for m in sys.modules if m.startswith({prefixes!r})))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return eval(result.stdout)  # noqa: S307 - our own subprocess printed a list literal


def test_importing_the_engine_and_store_loads_no_qt() -> None:
    imports = (
        "import desktop_app.engine, desktop_app.engine.loop.engine, desktop_app.store, desktop_app.library, "
        "desktop_app.models_cli, desktop_app.cli, desktop_app.engine_process.service"
    )
    assert _loaded_after(imports, ("PySide6", "shiboken6")) == []


def test_the_engines_types_load_without_llama_cpp() -> None:
    # what the window imports to talk to its engine process must not load llama.cpp (or numpy)
    imports = "import desktop_app.engine.api, desktop_app.engine_process.protocol, desktop_app.store.settings"
    assert _loaded_after(imports, ("llama_cpp", "numpy")) == []


def test_the_engine_package_loads_llama_cpp_only_when_asked() -> None:
    assert _loaded_after("import desktop_app.engine", ("llama_cpp",)) == []
    assert "llama_cpp" in _loaded_after("from desktop_app.engine import Engine", ("llama_cpp",))
