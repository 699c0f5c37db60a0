"""Your messages' files in the transcript: a chip for each document (its name and size; a click
shows the text the model read of it) and a thumbnail for each image (a click shows it larger),
under the message's text. Made when the message's widget is (the transcript makes the newest
messages' widgets only: :mod:`~desktop_app.ui.transcript.lazy_render`), from the history's
summaries: a document's text is read only when its chip is clicked."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import QDialog, QLabel, QPlainTextEdit, QScrollArea, QToolButton, QVBoxLayout, QWidget

from desktop_app.documents.attachment import AttachmentKind
from desktop_app.store import History
from desktop_app.store.attachments import AttachmentSummary
from desktop_app.ui.transcript.chat_view import ChatView, MessageWidget
from desktop_app.ui.transcript.shown_path import ShownPath
from desktop_app.ui.widgets.file_icons import document_icon, make_thumbnails, thumbnail
from desktop_app.ui.widgets.flow_layout import FlowLayout

THUMBNAIL_PX = 160  # an image in the transcript, at most, either side
VIEW_PX = 900  # an image opened, at most, either side


def size_text(size: int) -> str:
    """A file's size as people read it ("2.4 MB", "812 KB", "96 bytes")."""
    if size >= 1_000_000:
        return f"{size / 1e6:.1f} MB"
    return f"{size / 1e3:.0f} KB" if size >= 1_000 else f"{size} bytes"


class FileChips(QWidget):
    """A message's files, in a row that wraps (objectName ``messageFiles``)."""

    def __init__(self, files: list[AttachmentSummary], opened: Callable[[AttachmentSummary], None]) -> None:
        super().__init__()
        self.setObjectName("messageFiles")
        self.files = files
        layout = FlowLayout(self, spacing=6)
        layout.setContentsMargins(0, 2, 0, 2)
        self.buttons: list[QToolButton] = []
        for f in files:
            button = QToolButton()
            button.setAutoRaise(True)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextUnderIcon)
            if f.kind is AttachmentKind.IMAGE:
                button.setObjectName("messageImage")
                button.setIcon(document_icon(24))  # until its thumbnail is made, off the GUI thread
                button.setText(f.name)
                button.setToolTip(f"{f.name} ({size_text(f.size)}): click to view it larger")
            else:
                button.setObjectName("messageDocument")
                button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
                button.setIcon(document_icon(24))
                button.setText(f"{f.name} · {size_text(f.size)} · {f.chars:,} characters read")
                button.setToolTip(f"{f.name}: click to see the text the model read")
            button.setAccessibleName(f"Attached: {f.name}")
            button.clicked.connect(lambda _c=False, f=f: opened(f))
            layout.addWidget(button)
            self.buttons.append(button)
        self._pictures = [b for f, b in zip(files, self.buttons, strict=True) if f.kind is AttachmentKind.IMAGE]
        if self._pictures:
            pictures = [f.data for f in files if f.kind is AttachmentKind.IMAGE]
            make_thumbnails(pictures, THUMBNAIL_PX, self._show_thumbnail)

    def _show_thumbnail(self, index: int, image: QImage) -> None:
        if image.isNull():
            return
        with contextlib.suppress(RuntimeError):  # its message went (another conversation) while it was made
            button = self._pictures[index]
            button.setIcon(QPixmap.fromImage(image))
            button.setIconSize(image.size())


class FileViewer(QDialog):
    """A document's text as the model read it, or an image at a readable size."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachmentViewer")
        self.setWindowTitle(title)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.column = QVBoxLayout(self)
        self.resize(720, 560)

    def show_text(self, text: str) -> None:
        box = QPlainTextEdit()
        box.setReadOnly(True)
        box.setPlainText(text)
        self.column.addWidget(box)

    def show_image(self, data: bytes) -> None:
        label = QLabel()
        label.setPixmap(thumbnail(data, VIEW_PX))
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        area = QScrollArea()
        area.setWidget(label)
        area.setWidgetResizable(True)
        self.column.addWidget(area)


class MessageFiles(QObject):
    """Puts the files of each of your messages under its text, as its widget is made."""

    def __init__(self, view: ChatView, shown: ShownPath, history: History, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.view, self.shown, self.history = view, shown, history
        view.message_shown.connect(self._on_shown)

    @Slot(object)
    def _on_shown(self, widget: MessageWidget) -> None:
        if widget.role != "user":
            return
        position = self.view.earlier_count + self.view.messages.index(widget)
        if position >= len(self.shown.messages):
            return
        message_id = self.shown.messages[position].id
        try:
            files = self.history.attachments.summaries([message_id]).get(message_id)
        except sqlite3.Error:
            return  # the text shows; the history's trouble is said where it is written
        if files:
            chips = FileChips(files, self.open)
            layout = widget.layout()
            if isinstance(layout, QVBoxLayout):
                layout.insertWidget(layout.indexOf(widget.content) + 1, chips)

    def open(self, f: AttachmentSummary) -> None:
        """Show a file: an image larger, a document's text as the model read it."""
        viewer = FileViewer(f.name, self.view.window())
        if f.kind is AttachmentKind.IMAGE:
            viewer.show_image(f.data)
        else:
            try:
                whole = self.history.attachments.one(f.message_id, f.position)
            except sqlite3.Error as exc:
                whole = None
                viewer.show_text(f"The chat history cannot be read ({exc})")
            if whole is not None:
                viewer.show_text(whole.text)
        viewer.show()
