"""GUI fixtures: the real window with the real engine process, user data in a per-test home."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.library.conftest import hub, models_dir  # noqa: F401 - the library's fixtures, for the library window

LOAD_TIMEOUT_MS = 60_000
ANSWER_TIMEOUT_MS = 120_000


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SPECCHAT_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture()
def make_window(qtbot: Any, home: Path) -> Iterator[Callable[..., Any]]:
    """Build a started MainWindow with these settings; waits until its models are loaded.

    Every window made here is closed (engine process shut down) after the test.
    """
    from desktop_app.store import History, Settings
    from desktop_app.ui.main_window import MainWindow

    made: list[tuple[Any, Any]] = []

    def make(wait_loaded: bool = True, **settings: Any) -> Any:
        # One engine thread unless a test asks otherwise: tests open and close many windows,
        # and on a 2-core machine overlapping engine processes with 2 spinning threads each
        # would make the suite slow and flaky. The responsiveness test runs the real default.
        settings.setdefault("n_threads", 1)
        values = Settings.load()
        for name, value in settings.items():
            values.set(name, str(value) if isinstance(value, Path) else value)
        values.save()
        history = History()
        window = MainWindow(Settings.load(), history)
        qtbot.addWidget(window)
        made.append((window, history))
        window.show()
        if wait_loaded:
            with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS):
                window.start()
        else:
            window.start()
        return window

    yield make
    for window, history in made:
        window.close()
        history.close()
