"""Help → Keyboard shortcuts: every shortcut the window has, read from its QAction and QShortcut
objects when the list opens, so it cannot go stale."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QVBoxLayout, QWidget

from desktop_app.ui.models.library_tables import fill_table, make_table

NO_DESCRIPTION = "(no description)"


def _action_text(action: QAction) -> str:
    """The action's menu text; for one that works only in a widget, which widget ("in Conversations")."""
    text = action.text().replace("&", "").rstrip("…").strip() or action.toolTip() or NO_DESCRIPTION
    owner = action.parent()
    local = action.shortcutContext() in (
        Qt.ShortcutContext.WidgetShortcut,
        Qt.ShortcutContext.WidgetWithChildrenShortcut,
    )
    if local and isinstance(owner, QWidget) and owner.accessibleName():
        return f"{text} (in {owner.accessibleName()})"
    return text


def window_shortcuts(window: QWidget) -> list[tuple[str, str]]:
    """(keys, what they do) for every enabled shortcut of ``window`` and its children, by keys."""
    rows: set[tuple[str, str]] = set()
    for action in window.findChildren(QAction):
        for keys in action.shortcuts():
            if not keys.isEmpty():
                rows.add((keys.toString(QKeySequence.SequenceFormat.NativeText), _action_text(action)))
    for shortcut in window.findChildren(QShortcut):
        for keys in shortcut.keys():
            if not keys.isEmpty():
                what = shortcut.whatsThis() or shortcut.objectName() or NO_DESCRIPTION
                rows.add((keys.toString(QKeySequence.SequenceFormat.NativeText), what))
    return sorted(rows, key=lambda row: (row[1].lower(), row[0]))


class ShortcutList(QDialog):
    """A table of ``window``'s shortcuts: keys and what they do."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        self.rows = window_shortcuts(window)
        self.table = make_table("shortcutTable", ("Keys", "Does"))
        self.table.setSelectionMode(self.table.SelectionMode.NoSelection)
        fill_table(self.table, [(keys, what) for keys, what in self.rows])
        self.table.horizontalHeader().setStretchLastSection(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(460, min(600, 120 + 30 * len(self.rows)))
