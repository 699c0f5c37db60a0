"""What the Preferences window changes in the main window, and the text zoom (Ctrl+= / Ctrl+- / Ctrl+0).

:class:`Preferences` opens the dialog (File → Preferences…, Ctrl+,) and, when settings were
applied, makes the window show them: the side panel and drafter box, the text size, the theme
(ui/preferences/theme.py: at once, and at start), the API's port, and a reload of the models when
the context length, threads or GPU layers changed.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QShortcut
from PySide6.QtWidgets import QWidget

from desktop_app.store import Settings
from desktop_app.store.settings import FONT_SIZE
from desktop_app.ui.models.model_bar import ModelBar
from desktop_app.ui.preferences.preference_pages import RELOADING
from desktop_app.ui.preferences.preferences_dialog import PreferencesDialog
from desktop_app.ui.preferences.theme import ThemeSwitch
from desktop_app.ui.tools.mcp_settings import McpServersField
from desktop_app.ui.tools.mcp_tools import McpTools
from desktop_app.ui.window.shortcuts import LARGER_TEXT, NORMAL_TEXT, SMALLER_TEXT, bind


def reload_note(n_ctx: int, context_changed: bool) -> str:
    if context_changed:
        return f"Reloading the model with a {n_ctx:,}-token context…"
    return "Reloading the models with the new settings…"


class Preferences(QObject):
    """The window's Preferences dialog and text zoom.

    ``window`` holds the zoom shortcuts and is the dialog's parent; ``transcript`` and
    ``message_box`` take the text size, and the message box gets the focus back when the dialog
    closes; applied settings reach ``mcp`` (its servers), ``model_bar`` (GPU layers) and
    ``serve_action`` (the API's port), and ``show_settings()``, ``save_settings()``,
    ``tell(message)`` and ``reload_models()`` are the window's."""

    def __init__(
        self,
        window: QWidget,
        settings: Settings,
        transcript: QWidget,
        message_box: QWidget,
        mcp: McpTools,
        model_bar: ModelBar,
        serve_action: QAction,
        show_settings: Callable[[], None],
        save_settings: Callable[[], None],
        tell: Callable[[str], None],
        reload_models: Callable[[], None],
    ) -> None:
        super().__init__(window)
        self._window = window
        self.settings = settings
        self._text_widgets, self._message_box = (transcript, message_box), message_box
        self._mcp, self._model_bar, self._serve_action = mcp, model_bar, serve_action
        self._show_settings, self._save_settings, self._tell = show_settings, save_settings, tell
        self._reload_models = reload_models
        self.dialog: PreferencesDialog | None = None
        for declared, step in ((LARGER_TEXT, 1), (SMALLER_TEXT, -1)):
            shortcut = QShortcut(window)
            bind(shortcut, declared)  # Help → Keyboard shortcuts lists it
            shortcut.activated.connect(lambda step=step: self.zoom(step))
        reset = QShortcut(window)
        bind(reset, NORMAL_TEXT)
        reset.activated.connect(lambda: self.set_font_size(FONT_SIZE.default))
        self.show_font()
        self.theme = ThemeSwitch()
        if settings["theme"] != "system":  # System: the desktop's palette, untouched
            self.theme.apply(settings["theme"])

    def open(self) -> PreferencesDialog:
        """Show the dialog (window-modal); focus returns to the message box when it closes."""
        dialog = PreferencesDialog(self.settings, self._window)
        dialog.applied.connect(self._applied)
        if isinstance(servers := dialog.fields["mcp_servers"], McpServersField):
            servers.set_known_tools(self._mcp.tool_names())  # offered in its "Always allow" lists
        for name, spin in (
            ("n_gpu_layers", self._model_bar.target_gpu),
            ("draft_n_gpu_layers", self._model_bar.draft_gpu),
        ):
            if isinstance(field := dialog.fields[name], QWidget) and not spin.isEnabled():
                field.setEnabled(False)  # no GPU backend: the model bar's boxes are off too, saying why
                field.setToolTip(spin.toolTip())
        dialog.finished.connect(lambda _result: self._message_box.setFocus())
        self.dialog = dialog
        dialog.open()
        return dialog

    # ------------------------------------------------------------------ applying
    def _applied(self, changed: frozenset[str]) -> None:
        s = self.settings
        self._save_settings()
        self._show_settings()  # the side panel's and drafter box's values
        if "font_size" in changed:
            self.show_font()
        if "theme" in changed:
            self.theme.apply(s["theme"])
        if "mcp_servers" in changed:
            self._mcp.refresh()
        if "api_port" in changed:
            self._serve_action.setText(f"&Serve API on localhost:{s['api_port']}")
        if changed & RELOADING:
            self._model_bar.target_gpu.setValue(s["n_gpu_layers"])
            self._model_bar.draft_gpu.setValue(s["draft_n_gpu_layers"])
            self._tell(reload_note(s["n_ctx"], "n_ctx" in changed))
            self._reload_models()

    # ------------------------------------------------------------------ zoom
    def zoom(self, step: int) -> None:
        size = self.settings["font_size"] + step
        self.set_font_size(min(FONT_SIZE.high, max(FONT_SIZE.low, size)))

    def set_font_size(self, size: int) -> None:
        """The transcript's and message box's text size in points, saved."""
        self.settings.set("font_size", FONT_SIZE.check(size))
        self._save_settings()
        self.show_font()

    def show_font(self) -> None:
        for widget in self._text_widgets:
            font = widget.font()
            font.setPointSize(self.settings["font_size"])
            widget.setFont(font)
