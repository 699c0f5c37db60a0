"""The main window's menus: File (Preferences, export/import, Quit), Models (library, workers,
serve the API, its last requests), Help (keyboard shortcuts, About)."""

from __future__ import annotations

from PySide6.QtWidgets import QMainWindow, QMessageBox, QWidget

from desktop_app import __version__
from desktop_app.ui.engine.api_page import open_api_page, open_on_click
from desktop_app.ui.engine.api_server import ApiServer
from desktop_app.ui.window.shortcut_list import ShortcutList
from desktop_app.ui.window.shortcuts import LIBRARY, PREFERENCES, QUIT, bind


class WindowMenus:
    """Builds the menu bar of ``window``; the window connects the actions' ``triggered`` (and
    ``serve``'s ``toggled``) to what they do. Quit closes the window and About is shown here."""

    def __init__(self, window: QMainWindow, api_port: int, api: ApiServer) -> None:
        bar = window.menuBar()
        file_menu = self.file_menu = bar.addMenu("&File")
        self.preferences = file_menu.addAction("&Preferences…")
        self.preferences.setObjectName("preferencesAction")
        bind(self.preferences, PREFERENCES)
        file_menu.addSeparator()
        bind(file_menu.addAction("&Quit", window.close), QUIT)
        models_menu = bar.addMenu("&Models")
        self.library = models_menu.addAction("Model &library…")
        self.library.setObjectName("openLibraryAction")
        bind(self.library, LIBRARY)
        self.library.setStatusTip("Local models, which drafts fit which targets, and the catalog to download")
        self.workers = models_menu.addAction("&Workers…")
        self.workers.setObjectName("workersAction")
        self.workers.setStatusTip("Spread the target over other computers running `specchat worker`")
        models_menu.addSeparator()
        self.serve = models_menu.addAction(f"&Serve API on localhost:{api_port}")
        self.serve.setObjectName("serveApiAction")
        self.serve.setCheckable(True)
        self.serve.setStatusTip("Serve the loaded models with the OpenAI API, for editors and scripts")
        self.api_requests = models_menu.addAction("API &requests…", lambda: open_api_page(api, window))
        self.api_requests.setObjectName("apiRequestsAction")
        self.api_requests.setStatusTip("The API's last requests: endpoint, tokens, speed, status")
        if (api_label := window.statusBar().findChild(QWidget, "apiLabel")) is not None:
            open_on_click(api_label, api, window)  # the status bar's API address opens them too
        help_menu = bar.addMenu("&Help")
        shortcuts = help_menu.addAction("&Keyboard shortcuts", lambda: ShortcutList(window).open())
        shortcuts.setObjectName("shortcutListAction")
        # A lambda over the window, not a method of this object (which is not kept once built).
        about = help_menu.addAction("&About SpecChat", lambda: show_about(window))
        about.setObjectName("aboutAction")


def show_about(window: QMainWindow) -> None:
    QMessageBox.about(
        window,
        "About SpecChat",
        f"SpecChat {__version__}\nChat with local models, made faster by speculative decoding.",
    )
