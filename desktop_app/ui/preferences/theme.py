"""The window's colours (the "theme" setting): the desktop's (System), or Light or Dark of the
app's own, applied to the whole application at once.

System pins nothing: Qt's platform theme gives the palette (a GTK or KDE dark theme, Windows' and
macOS's dark mode) and changes it when the desktop changes; every widget that draws its own
colours (the transcript's code blocks and draft tints, the speed dial, the focus rings in
ui/widgets/focus_ring.py) reads them from the palette, and renders again on a palette change.
Light and Dark set a whole palette, Fusion's own colours for each, and the Fusion style (a native
style may draw with the desktop's colours whatever the palette says); the platform is asked for the
same colour scheme (Qt 6.8), so that title bars follow where it can.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from desktop_app.store.settings import THEMES

THEME_LABELS = {"system": "System (as the desktop)", "light": "Light", "dark": "Dark"}
SCHEMES = {"system": Qt.ColorScheme.Unknown, "light": Qt.ColorScheme.Light, "dark": Qt.ColorScheme.Dark}
FUSION = "fusion"
assert tuple(THEME_LABELS) == THEMES and tuple(SCHEMES) == THEMES


def theme_palette(dark: bool) -> QPalette:
    """Fusion's light or dark palette (qt_fusionPalette in Qt's sources), whatever the desktop's
    scheme, with a user message's background (AlternateBase) a shade off the window's."""
    window_text = QColor(240, 240, 240) if dark else QColor(Qt.GlobalColor.black)
    window = QColor(50, 50, 50) if dark else QColor(239, 239, 239)
    base = window.darker(140) if dark else QColor(Qt.GlobalColor.white)
    mid = window.darker(130)
    dark_shade = window.darker(150)
    palette = QPalette(window_text, window, window.lighter(150), dark_shade, mid, window_text, base)
    highlight = QColor(48, 140, 198)
    group = QPalette.ColorGroup
    role = QPalette.ColorRole
    palette.setColor(role.Midlight, mid.lighter(110))
    palette.setColor(role.Button, window)
    palette.setColor(role.ButtonText, window_text)
    palette.setColor(role.Shadow, dark_shade.darker(135))
    palette.setColor(role.HighlightedText, window_text if dark else QColor(Qt.GlobalColor.white))
    palette.setColor(role.AlternateBase, window.lighter(125) if dark else QColor(247, 247, 247))
    palette.setColor(role.ToolTipBase, QColor(60, 60, 60) if dark else QColor(255, 255, 220))
    palette.setColor(role.ToolTipText, window_text)
    palette.setColor(role.Link, QColor(110, 180, 255) if dark else QColor(Qt.GlobalColor.blue))
    palette.setColor(role.LinkVisited, QColor(190, 150, 255) if dark else QColor(Qt.GlobalColor.magenta))
    placeholder = QColor(window_text)
    placeholder.setAlpha(128)
    palette.setColor(role.PlaceholderText, placeholder)
    for g in (group.Active, group.Inactive):
        palette.setColor(g, role.Highlight, highlight)
        palette.setColor(g, role.Accent, highlight)
    disabled_text = QColor(130, 130, 130) if dark else QColor(190, 190, 190)
    for r in (role.Text, role.WindowText, role.ButtonText):
        palette.setColor(group.Disabled, r, disabled_text)
    palette.setColor(group.Disabled, role.Base, window)
    palette.setColor(group.Disabled, role.Highlight, QColor(145, 145, 145))
    return palette


class ThemeSwitch:
    """Applies a theme to the running application; remembers the style the desktop gave it, to
    put back for System."""

    def __init__(self) -> None:
        app = QApplication.instance()
        self._desktop_style = app.style().name() if isinstance(app, QApplication) else FUSION
        self.theme = "system"

    def apply(self, theme: str) -> None:
        """Show ``theme`` ("system", "light" or "dark": a THEMES value; another is System)."""
        app = QApplication.instance()
        if not isinstance(app, QApplication):
            return
        self.theme = theme if theme in THEMES else "system"
        hints = QGuiApplication.styleHints()
        if hasattr(hints, "setColorScheme"):  # Qt 6.8: the platform's own parts (title bars) too
            hints.setColorScheme(SCHEMES[self.theme])
        if self.theme == "system":
            if app.style().name() != self._desktop_style:
                app.setStyle(self._desktop_style)
            app.setPalette(QPalette())  # nothing pinned: the platform theme's palette, as it changes
            return
        if app.style().name() != FUSION:
            app.setStyle(FUSION)
        app.setPalette(theme_palette(self.theme == "dark"))
