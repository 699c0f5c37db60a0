"""Small pictures of files: a paperclip, a document's icon, an image's thumbnail."""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QPointF, QSize, Qt
from PySide6.QtGui import QIcon, QImage, QImageReader, QPainter, QPainterPath, QPalette, QPen, QPixmap
from PySide6.QtWidgets import QApplication, QStyle

from desktop_app.documents.attachment import Attachment, AttachmentKind


def paperclip_icon(px: int = 20) -> QIcon:
    """A paperclip drawn in the palette's text colour (no emoji font needed): a wire of three
    straight runs and two bends, leaning right."""
    pixmap = QPixmap(px, px)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(QApplication.palette().color(QPalette.ColorRole.WindowText), max(1.2, px / 14)))
    painter.translate(px / 2, px / 2)
    painter.rotate(40)
    s = px / 24  # drawn on a 24-unit grid, upright, centred on the origin
    path = QPainterPath(QPointF(1.5 * s, -5 * s))  # the inner end
    path.lineTo(1.5 * s, 6 * s)
    path.arcTo(-1.5 * s, 3 * s, 3 * s, 6 * s, 0, -180)  # the inner bend, at the bottom
    path.lineTo(-1.5 * s, -7 * s)
    path.arcTo(-1.5 * s, -10 * s, 6 * s, 6 * s, 180, -180)  # the top bend
    path.lineTo(4.5 * s, 7 * s)
    path.arcTo(-4.5 * s, 2.5 * s, 9 * s, 9 * s, 0, -180)  # the outer bend, at the bottom
    path.lineTo(-4.5 * s, -4 * s)
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
