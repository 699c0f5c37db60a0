"""Help → Keyboard shortcuts: every shortcut the window has, read from its QAction and QShortcut
objects when the list opens, so it cannot go stale, in the order ui/window/shortcuts.py declares."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QVBoxLayout, QWidget

from desktop_app.ui.models.library_tables import fill_table, make_table
from desktop_app.ui.window.shortcuts import ORDER, RANK, TYPED

NO_DESCRIPTION = "(no description)"


def _action_text(action: QAction) -> str:
    """The action's words (its declaration's, else its menu text); for one that works only in a
    widget, which widget ("in Conversations")."""
    menu_text = action.text().replace("&", "").rstrip("…").strip()
    text = action.whatsThis() or menu_text or action.toolTip() or NO_DESCRIPTION
    owner = action.parent()
    local = action.shortcutContext() in (
        Qt.ShortcutContext.WidgetShortcut,
        Qt.ShortcutContext.WidgetWithChildrenShortcut,
    )
    if local and isinstance(owner, QWidget) and owner.accessibleName():
        return f"{text} (in {owner.accessibleName()})"
    return text


def _keys_text(keys: list[QKeySequence]) -> str:
    return " / ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in keys if not k.isEmpty())


def _rank(target: QObject) -> int:
    rank = target.property(RANK)
    return rank if isinstance(rank, int) else len(ORDER)  # undeclared: after the declared ones


def window_shortcuts(window: QWidget) -> list[tuple[str, str]]:
    """(keys, what they do) for every shortcut of ``window`` and its children, and the message
    box's own keys (:data:`TYPED`), in the declared order (ui/window/shortcuts.py); one row per
    action, its keys together ("Ctrl+= / Ctrl++")."""
    rows: dict[tuple[str, str], int] = {}
    for typed in TYPED:
        rows[(_keys_text(typed.sequences()), typed.does)] = ORDER.index(typed)
    for action in window.findChildren(QAction):
        if keys := _keys_text(action.shortcuts()):
            rows.setdefault((keys, _action_text(action)), _rank(action))
    for shortcut in window.findChildren(QShortcut):
        if keys := _keys_text(shortcut.keys()):
            what = shortcut.whatsThis() or shortcut.objectName() or NO_DESCRIPTION
            rows.setdefault((keys, what), _rank(shortcut))
    return sorted(rows, key=lambda row: (rows[row], row[1].lower(), row[0]))


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
