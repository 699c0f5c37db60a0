"""Small pictures of files: a paperclip, a document's icon, an image's thumbnail."""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QBuffer, QByteArray, QObject, QPointF, QSize, Qt, Signal
from PySide6.QtGui import QIcon, QImage, QImageReader, QPainter, QPainterPath, QPalette, QPen, QPixmap
from PySide6.QtWidgets import QApplication, QStyle

from desktop_app.documents.attachment import AttachmentKind
from desktop_app.ui.engine.thread_relay import hold

CHIP_ICON_PX = 20  # a composer chip's icon or thumbnail, and the paperclip


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


def scaled_image(data: bytes, px: int) -> QImage:
    """An image's file read scaled to fit ``px`` square (a null image when it cannot be read).
    A QImage, not a pixmap: made on any thread (a large PNG takes tens of milliseconds)."""
    reader = QImageReader()
    raw = QByteArray(data)  # kept referenced while read: the buffer only points at it
    device = QBuffer(raw)
    reader.setDevice(device)
    size = reader.size()
    if size.isValid() and (size.width() > px or size.height() > px):
        reader.setScaledSize(size.scaled(QSize(px, px), Qt.AspectRatioMode.KeepAspectRatio))
    image: QImage = reader.read()
    return image


def thumbnail(data: bytes, px: int) -> QPixmap:
    """An image's file scaled to fit ``px`` square, now (the GUI thread: a picture opened)."""
    image = scaled_image(data, px)
    return QPixmap.fromImage(image) if not image.isNull() else QPixmap()


class _ThumbnailRelay(QObject):
    made = Signal(int, QImage)  # the picture's place in the list given, its thumbnail


def make_thumbnails(pictures: list[bytes], px: int, receiver: Callable[[int, QImage], None]) -> None:
    """Scale these image files on a thread of their own; ``receiver(i, image)`` gets each in the
    GUI thread (a transcript opened with many pictures never waits for them)."""
    relay = _ThumbnailRelay()
    relay.made.connect(receiver)

    def target() -> None:
        try:
            for i, data in enumerate(pictures):
                relay.made.emit(i, scaled_image(data, px))
        finally:
            relay.deleteLater()

    thread = threading.Thread(target=target, name="thumbnails", daemon=True)
    hold(relay, thread)
    thread.start()


def document_icon(px: int) -> QPixmap:
    """The style's file icon."""
    return QApplication.style().standardIcon(QStyle.StandardPixmap.SP_FileIcon).pixmap(px, px)


def kind_icon(kind: AttachmentKind, image: QImage | None, px: int) -> QPixmap:
    """An image's thumbnail (made beforehand: :func:`scaled_image`), or a document's file icon."""
    if kind is AttachmentKind.IMAGE and image is not None and not image.isNull():
        return QPixmap.fromImage(image)
    return document_icon(px)
