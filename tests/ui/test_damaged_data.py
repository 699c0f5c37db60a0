"""The user's data is never silently destroyed, and start-up problems are said, not tracebacks."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from desktop_app.store import History
from desktop_app.ui.window.startup import StartupCancelled, open_history
from tests.store.test_history import _damaged_history
from tests.ui.conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS
from tests.ui.helpers import last_answer, send_and_wait, type_and_send


def _answer_dialog(button_text: str, seen: list[str]) -> None:
    """Click ``button_text`` in the modal dialog as soon as it shows (what a user would do)."""

    def click() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(50, click)
            return
        seen.append(box.text())
        for button in box.buttons():
            if button.text() == button_text:
                button.click()
                return

    QTimer.singleShot(50, click)


@pytest.mark.parametrize("kind", ["random bytes", "damaged page"])
@pytest.mark.parametrize("choice", ["Start a new history", "Quit"])
def test_an_unreadable_history_asks_and_keeps_the_file(qtbot: Any, home: Path, choice: str, kind: str) -> None:
    path = home / "data" / "history.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "random bytes":
        original = bytes(random.Random(2).randrange(256) for _ in range(8192))
        path.write_bytes(original)
    else:
        original = _damaged_history(path)
    seen: list[str] = []
    _answer_dialog(choice, seen)
    if choice == "Quit":
        with pytest.raises(StartupCancelled):
            open_history()
        assert path.read_bytes() == original  # untouched
    else:
        history, note = open_history()
        try:
            kept = [
                p
                for p in path.parent.iterdir()
                if p.name.startswith("history.sqlite3.broken-") and not p.name.endswith(("-wal", "-shm"))
            ]
            assert len(kept) == 1 and kept[0].read_bytes() == original
            assert note is not None and kept[0].name in note
            assert history.conversations() == []
        finally:
            history.close()
    assert seen and "cannot be read" in seen[0] and str(path) in seen[0]


def test_a_settings_file_with_a_typo_is_reported_once_in_the_window(qtbot: Any, make_window: Any, home: Path) -> None:
    path = home / "config" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"spec_mode": "on", "max_tokens": 77,}')
    from desktop_app.store import Settings
    from desktop_app.ui.main_window import MainWindow

    window = MainWindow(Settings.load(), History())
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS):
        window.start()
    try:
        assert len(window.notices) == 1 and "settings.json.broken-" in window.notices[0]
        assert window.side.always.isChecked() and window.settings["max_tokens"] == 77
    finally:
        window.close()


def test_a_failed_save_is_shown_and_the_message_stays_in_the_box(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target, max_tokens=8)
    window.history._db.execute("PRAGMA query_only = ON")  # every write now fails, as on a full or locked disk
    type_and_send(qtbot, window, "Please keep this text")
    assert not window.session.busy and window.chat_view.messages == []
    assert window.input.toPlainText() == "Please keep this text"
    assert any("cannot be written" in n for n in window.notices)
    assert "cannot be written" in window.status.currentMessage()
    window.history._db.execute("PRAGMA query_only = OFF")
    window.input.clear()
    send_and_wait(qtbot, window, "Now it works")
    assert last_answer(window).text


def test_a_looping_template_fails_fast_stop_works_and_the_model_can_be_replaced(
    qtbot: Any, make_window: Any, models: Any
) -> None:
    window = make_window(target_path=models.looping_template, max_tokens=8)
    with qtbot.waitSignal(window.session.error, timeout=10_000) as failed:
        type_and_send(qtbot, window, "Hello")
    assert "looping-template.gguf" in failed.args[0] and "did not finish rendering" in failed.args[0]
    qtbot.waitUntil(lambda: window.send_button.isEnabled(), timeout=5000)
    window.stop_button.click()  # nothing left to stop: harmless
    assert window.model_bar.isEnabled()
    with qtbot.waitSignal(window.session.error, timeout=10_000):
        type_and_send(qtbot, window, "Second try")
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS):
        window.model_bar.choose_target(str(models.target))
    send_and_wait(qtbot, window, "Hello again", timeout=ANSWER_TIMEOUT_MS)
    assert last_answer(window).text


_START_AND_CLOSE_THE_DIALOG = (
    "import sys\n"
    "from PySide6.QtCore import QTimer\n"
    "from PySide6.QtWidgets import QApplication\n"
    "app = QApplication(sys.argv)\n"
    "seen = []\n"
    "def close():\n"
    "    box = QApplication.activeModalWidget()\n"
    "    if box is None:\n"
    "        QTimer.singleShot(50, close); return\n"
    "    seen.append(box.objectName() + ': ' + box.text()); box.close()\n"
    "QTimer.singleShot(50, close)\n"
    "from desktop_app.ui.app import run_app\n"
    "code = run_app()\n"
    "print('DIALOG', seen)\n"
    "sys.exit(code)\n"
)


def _start_the_app_read_only(home: Path, *folders: Path) -> subprocess.CompletedProcess[str]:
    """Start the app in a real process with ``folders`` made read-only (0o555) meanwhile; it
    closes the first dialog and prints what it said."""
    for folder in folders:
        folder.chmod(0o555)
    env = {**os.environ, "SPECCHAT_HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}
    # as root, permissions are ignored: drop the capability that overrides them
    prefix = (
        ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    )
    try:
        return subprocess.run(
            [*prefix, sys.executable, "-c", _START_AND_CLOSE_THE_DIALOG],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        for folder in folders:
            folder.chmod(0o755)


def test_a_read_only_home_is_explained_in_a_dialog_and_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    History(home / "data" / "history.sqlite3").close()
    (home / "config").mkdir(parents=True)
    out = _start_the_app_read_only(home, home / "data", home / "config", home)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("specchat: error: ")]
    assert len(errors) == 1 and "cannot" in errors[0] and str(home / "data") in errors[0]
    assert "startupErrorDialog: " in out.stdout and str(home / "data") in out.stdout


def test_an_empty_read_only_home_gets_the_same_dialog(tmp_path: Path) -> None:
    # Once a raw "[Errno 30] Read-only file system" on stderr and no dialog: from the desktop menu, nothing at all.
    home = tmp_path / "home"
    home.mkdir()
    out = _start_the_app_read_only(home, home)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and "Errno" not in out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("specchat: error: ")]
    assert errors == [
        f"specchat: error: SpecChat cannot create its folder {home / 'config'} (Permission denied): "
        f"make {home} writable, or set SPECCHAT_HOME to a folder you can write to"
    ]
    assert f"DIALOG ['startupErrorDialog: {errors[0].removeprefix('specchat: error: ')}']" in out.stdout


def test_a_home_under_a_file_gets_the_dialog_in_the_window_process(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A path under a regular file cannot be created even by root (NotADirectoryError), so this
    # real state needs no dropped capabilities; it takes the same path as a read-only folder.
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the home folder should be")
    monkeypatch.setenv("SPECCHAT_HOME", str(blocker / "home"))
    seen: list[str] = []

    def close() -> None:
        box = QApplication.activeModalWidget()
        if box is None:
            QTimer.singleShot(50, close)
            return
        seen.append(f"{box.objectName()}: {box.text()}")
        box.close()

    QTimer.singleShot(50, close)
    from desktop_app.ui.app import run_app

    assert run_app() == 1
    message = (
        f"SpecChat cannot create its folder {blocker / 'home' / 'config'} (Not a directory): {blocker} is a "
        "file, not a folder: move it away, or set SPECCHAT_HOME to a folder you can write to"
    )
    assert seen == [f"startupErrorDialog: {message}"]
    assert capsys.readouterr().err.splitlines() == [f"specchat: error: {message}"]
