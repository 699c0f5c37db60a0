"""Opening the user's settings and history when the window starts, and saying what went wrong.

Nothing here destroys user data: a damaged history is kept byte for byte under a new name, and
only when the user chooses to start a fresh one; a settings file that cannot be read was already
set aside by :meth:`Settings.load`. Start-up failures show a dialog (there is a window system)
and one line on stderr (a launcher may hide the dialog's parent terminal, a terminal user sees
the line); never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from PySide6.QtWidgets import QApplication, QMessageBox

from desktop_app.store import History, HistoryDamaged, start_fresh
from desktop_app.ui.widgets.plain_text import plain_box


class StartupCancelled(Exception):
    """The user chose to quit rather than start a new history."""


def ask_start_fresh(problem: HistoryDamaged) -> bool:
    """Ask whether to keep the damaged history aside and start an empty one."""
    box = plain_box(  # paths and reasons as written
        QMessageBox.Icon.Warning,
        "Chat history cannot be read",
        f"{problem}\n\nSpecChat can start a new, empty history. The damaged file is kept as it "
        f"is, renamed to {problem.path.name}.broken-<date>, so nothing is lost.",
    )
    box.setObjectName("historyDamagedDialog")
    fresh = box.addButton("Start a new history", QMessageBox.ButtonRole.AcceptRole)
    box.addButton("Quit", QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(fresh)
    box.exec()
    return box.clickedButton() is fresh


def open_history(ask: Callable[[HistoryDamaged], bool] = ask_start_fresh) -> tuple[History, str | None]:
    """The history, and a line to show once when a damaged one was set aside.

    Raises StartupCancelled when the user declines a fresh history, and DataDirError when the
    data folder cannot be used."""
    try:
        return History(), None
    except HistoryDamaged as problem:
        if not ask(problem):
            raise StartupCancelled(str(problem)) from None
        history, kept = start_fresh(problem.path)
        return history, f"A new chat history was started; the unreadable one is kept as {kept}"


def show_startup_error(message: str) -> None:
    """One line on stderr and, when Qt is up, a dialog."""
    print(f"specchat: error: {message}", file=sys.stderr)
    if isinstance(QApplication.instance(), QApplication):
        box = plain_box(QMessageBox.Icon.Critical, "SpecChat cannot start", message)
        box.setObjectName("startupErrorDialog")
        box.exec()
