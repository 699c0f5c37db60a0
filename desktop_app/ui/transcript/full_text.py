"""The whole text of a message too long to render (desktop_app.ui.transcript.render_budget): a "Show all
(N lines)" link under what is rendered, which opens the text, as written, in a plain view that
shows megabytes at once (QPlainTextEdit lays out only the lines in sight)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from desktop_app.ui.transcript.render_budget import show_all_label

SHOW_ALL_HREF = "show-all"


class FullTextDialog(QDialog):
    """A message's whole text, read-only and selectable, with Copy all; closes on Close or Esc."""

    def __init__(self, title: str, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("fullTextDialog")
        self.setWindowTitle(title)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.view = QPlainTextEdit()
        self.view.setObjectName("fullText")
        self.view.setAccessibleName(title)
        self.view.setReadOnly(True)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.view.setPlainText(text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_button = buttons.addButton("Copy all", QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.view.toPlainText()))
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view)
        layout.addWidget(buttons)
        self.resize(820, 620)


class ShowAllLink(QLabel):
    """The link under a cut message's render: "Show all (N lines)" of ``text()``, the whole text,
    opened in a :class:`FullTextDialog` titled ``title()`` on a click (``dialog``: the last one)."""

    def __init__(self, text: Callable[[], str], title: Callable[[], str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("showAll")
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self._text, self._title = text, title
        self.dialog: FullTextDialog | None = None
        self.linkActivated.connect(self.open_text)
        self.hide()

    def show_for(self, text: str, cut: bool) -> None:
        """Shown, with its count of ``text``, where the render was ``cut``; hidden otherwise."""
        if cut:
            label = show_all_label(text)
            self.setText(f'<a href="{SHOW_ALL_HREF}">{label}</a>')
            self.setAccessibleName(label)
        self.setVisible(cut)

    def open_text(self, _href: str = "") -> None:
        self.dialog = FullTextDialog(self._title(), self._text(), self.window())
        self.dialog.show()
