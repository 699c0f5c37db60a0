"""Small pictures of files: a paperclip, a document's icon, an image's thumbnail."""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QPointF, QSize, Qt
from PySide6.QtGui import QIcon, QImage, QImageReader, QPainter, QPainterPath, QPalette, QPen, QPixmap
from PySide6.QtWidgets import QApplication, QStyle

from desktop_app.documents.attachment import Attachment, AttachmentKind


def paperclip_icon(px: int = 18) -> QIcon:
    """A paperclip drawn in the palette's text colour (no emoji font needed)."""
    pixmap = QPixmap(px, px)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(QApplication.palette().color(QPalette.ColorRole.WindowText), px / 12))
    s = px / 18
    path = QPainterPath(QPointF(12 * s, 6 * s))
    path.lineTo(12 * s, 13 * s)
    path.arcTo(6 * s, 10 * s, 6 * s, 6 * s, 0, -180)  # the bottom bend, opening upwards
    path.lineTo(6 * s, 4 * s)
    path.arcTo(6 * s, 1 * s, 8 * s, 6 * s, 180, -180)
    path.lineTo(14 * s, 13 * s)
    painter.drawPath(path)
    painter.end()
    return QIcon(pixmap)


def thumbnail(data: bytes, px: int) -> QPixmap:
    """An image's file scaled to fit ``px`` square (read scaled where the format allows)."""
    reader = QImageReader()
    buffer = QByteArray(data)
    device = QBuffer(buffer)
    reader.setDevice(device)
    size = reader.size()
    if size.isValid() and (size.width() > px or size.height() > px):
        reader.setScaledSize(size.scaled(QSize(px, px), Qt.AspectRatioMode.KeepAspectRatio))
    image: QImage = reader.read()
    return QPixmap.fromImage(image) if not image.isNull() else QPixmap()


def document_icon(px: int) -> QPixmap:
    """The style's file icon."""
    return QApplication.style().standardIcon(QStyle.StandardPixmap.SP_FileIcon).pixmap(px, px)


def kind_icon(attachment: Attachment, px: int) -> QPixmap:
    """An image's thumbnail, or a document's file icon."""
    if attachment.kind is AttachmentKind.IMAGE:
        shown = thumbnail(attachment.data, px)
        if not shown.isNull():
            return shown
    return document_icon(px)
