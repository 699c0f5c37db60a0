"""The files of the message being written, as chips above the message box (name, kind icon or
thumbnail, token count, ×), and the paperclip beside it that adds files."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QImage, QPalette
from PySide6.QtWidgets import QFileDialog, QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from desktop_app.documents.attachment import Attachment, AttachmentKind
from desktop_app.ui.composer.attachments import ComposerFiles
from desktop_app.ui.widgets.file_dialogs import remember_folder, start_folder
from desktop_app.ui.widgets.file_icons import CHIP_ICON_PX, kind_icon, paperclip_icon
from desktop_app.ui.widgets.flow_layout import FlowLayout

ICON_PX = CHIP_ICON_PX
ATTACHMENTS = "attachments"  # the file dialog's kind: it opens where the last file was attached from
FILE_FILTERS = "Documents and images (*.txt *.md *.csv *.json *.log *.py *.pdf *.docx *.png *.jpg *.jpeg *.gif *.webp *.bmp);;All files (*)"
BLIND = "The loaded model cannot see images: load a vision model (one with its mmproj file), or remove the image"


class AttachmentChip(QFrame):
    """One file: its icon, name and token count, and × to remove it (objectName ``attachmentChip``).

    Signals:
        removed(): × was clicked.
    """

    removed = Signal()

    def __init__(self, attachment: Attachment, icon: QImage | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.attachment = attachment
        self.setObjectName("attachmentChip")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 1, 2, 1)
        row.setSpacing(4)
        self.icon = QLabel()
        self.icon.setPixmap(kind_icon(attachment.kind, icon, ICON_PX))
        row.addWidget(self.icon)
        self.name = QLabel(attachment.name)
        self.name.setTextFormat(Qt.TextFormat.PlainText)
        row.addWidget(self.name)
        self.tokens = QLabel("counting…")
        self.tokens.setObjectName("attachmentTokens")
        self.tokens.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        row.addWidget(self.tokens)
        self.remove = QToolButton()
        self.remove.setText("×")
        self.remove.setAutoRaise(True)
        self.remove.setAccessibleName(f"Remove {attachment.name}")
        self.remove.setToolTip(f"Remove {attachment.name}")
        self.remove.clicked.connect(self.removed.emit)
        row.addWidget(self.remove)
        self.setAccessibleName(f"Attached: {attachment.name}")

    def show_tokens(self, tokens: int | None) -> None:
        self.tokens.setText("counting…" if tokens is None else f"{tokens:,} tokens")

    def show_blind(self, blind: bool) -> None:
        """An image the loaded model cannot see says so."""
        self.tokens.setText("not seen by this model" if blind else self.tokens.text())
        self.setToolTip(BLIND if blind else "")


class ComposerChips(QWidget):
    """The chips of :class:`ComposerFiles`' files, in a row that wraps; hidden when there are none."""

    def __init__(self, files: ComposerFiles, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachmentChips")
        self.files = files
        self.chips: list[AttachmentChip] = []
        self._layout = FlowLayout(self, spacing=4)
        self._layout.setContentsMargins(0, 2, 0, 2)
        self.tokens: dict[int, int] = {}  # by id() of an Attachment: its count
        self.blind = False  # the loaded model sees no images
        files.changed.connect(self.refresh)
        self.hide()

    def refresh(self) -> None:
        for chip in self.chips:
            self._layout.removeWidget(chip)
            chip.deleteLater()
        self.chips = []
        for index, attachment in enumerate(self.files.files):
            chip = AttachmentChip(attachment, self.files.icons.get(id(attachment)), self)
            chip.removed.connect(lambda i=index: self.files.remove(i))
            chip.show_tokens(self.tokens.get(id(attachment)))
            chip.show_blind(self.blind and attachment.kind is AttachmentKind.IMAGE)
            self._layout.addWidget(chip)
            self.chips.append(chip)
        self.setVisible(bool(self.chips))

    def show_tokens(self, attachment: Attachment, tokens: int) -> None:
        self.tokens[id(attachment)] = tokens
        for chip in self.chips:
            if chip.attachment is attachment:
                chip.show_tokens(tokens)
                chip.show_blind(self.blind and attachment.kind is AttachmentKind.IMAGE)

    def set_blind(self, blind: bool) -> None:
        self.blind = blind
        self.refresh()


class AttachButton(QToolButton):
    """The paperclip beside the message box: pick files to attach (objectName ``attachButton``)."""

    def __init__(self, files: ComposerFiles, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.files = files
        self.setObjectName("attachButton")
        self.setIcon(paperclip_icon(ICON_PX))
        self.setIconSize(QSize(ICON_PX, ICON_PX))
        self.setAccessibleName("Attach files")
        self.setToolTip(
            "Attach files: documents (text, Markdown, code, CSV, PDF, Word) or images; or drop or paste them"
        )
        self.clicked.connect(self.ask)

    def ask(self) -> None:
        paths, _filter = QFileDialog.getOpenFileNames(
            self.window(), "Attach files", str(start_folder(ATTACHMENTS)), FILE_FILTERS
        )
        if paths:
            remember_folder(ATTACHMENTS, paths[0])
            self.files.add_paths(paths)
