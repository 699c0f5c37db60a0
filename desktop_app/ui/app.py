"""``run_app()``: the ``specchat`` command without a subcommand."""

from __future__ import annotations

import sys

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from desktop_app.paths import APP_NAME
from desktop_app.resources import resources_dir
from desktop_app.store import DataDirError, Settings, StoreError
from desktop_app.ui.main_window import MainWindow
from desktop_app.ui.window.startup import StartupCancelled, open_history, show_startup_error


def run_app() -> int:
    """Open the window with the last models (the embedded default model on first run)."""
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv)
    app.setApplicationName(APP_NAME)
    app.setDesktopFileName("specchat")
    app.setWindowIcon(QIcon(str(resources_dir() / "icons" / "specchat.svg")))
    try:
        settings = Settings.load()
        history, history_note = open_history()
    except StartupCancelled:
        return 1
    except (StoreError, DataDirError) as exc:  # damaged, or a folder that cannot be written: the same dialog
        show_startup_error(str(exc))
        return 1
    window = MainWindow(settings, history)
    window.show()
    window.start()
    if history_note:
        window.tell(history_note)
    try:
        return int(app.exec())
    finally:
        history.close()
