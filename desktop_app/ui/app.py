"""``run_app()``: the ``specchat`` command without a subcommand."""

from __future__ import annotations

import sys

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from desktop_app.paths import APP_NAME
from desktop_app.resources import resources_dir
from desktop_app.store import History, Settings
from desktop_app.ui.main_window import MainWindow


def run_app() -> int:
    """Open the window with the last models (the embedded default model on first run)."""
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv)
    app.setApplicationName(APP_NAME)
    app.setDesktopFileName("specchat")
    app.setWindowIcon(QIcon(str(resources_dir() / "icons" / "specchat.svg")))
    settings = Settings.load()
    history = History()
    window = MainWindow(settings, history)
    window.show()
    window.start()
    try:
        return int(app.exec())
    finally:
        history.close()
