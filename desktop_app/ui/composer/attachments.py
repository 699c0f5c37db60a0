"""The files attached to the message being written: read off the GUI thread, kept in order until
the message is sent (or a file is removed with its chip's ×), and given by the paperclip, by
dropping files on the window or the message box, or by pasting files or an image.

A file is read (:func:`desktop_app.documents.reading.read_file`: a PDF's text layer can take
seconds) on a thread of its own; what it gives comes back to the GUI thread through a relay. A
file that cannot be attached is said in its one line (``failed``) and nothing else changes: the
typed text and the other files stay.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QEvent, QIODevice, QMimeData, QObject, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QGuiApplication, QImage, QKeyEvent, QKeySequence

from desktop_app.documents.attachment import Attachment, AttachmentError, AttachmentKind
from desktop_app.documents.reading import read_attachment, read_file
from desktop_app.ui.engine.thread_relay import hold
from desktop_app.ui.widgets.file_icons import CHIP_ICON_PX, scaled_image

PASTED_IMAGE = "pasted image {n}.png"  # a clipboard image's name (it has none of its own)


class _ReadRelay(QObject):
    """What a reading thread emits on (parentless; see ui/engine/thread_relay.py)."""

    read = Signal(int, object, object)  # its ticket, the Attachment, an image's chip icon (QImage) or None
    failed = Signal(int, str)  # its ticket, the one-line reason


def _read_bytes(name: str, data: bytes, mime: str | None) -> Attachment:
    return read_attachment(name, data, mime)


class ComposerFiles(QObject):
    """The files of the message being written, in the order given.

    Signals:
        changed(): a file was added or removed, or all were sent.
        failed(str): a file could not be attached; why, in one line.
    """

    changed = Signal()
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.files: list[Attachment] = []
        self.icons: dict[int, QImage] = {}  # by id() of an image: its chip's thumbnail, made where it was read
        self._reading: dict[int, str] = {}  # tickets of the files being read, and their names
        self._tickets: dict[int, int] = {}  # by id() of a file read: its ticket (the order it was given in)
        self._next = 0
        self._pasted = 0

    @property
    def reading(self) -> list[str]:
        """The names of the files still being read."""
        return list(self._reading.values())

    def add_paths(self, paths: Sequence[str | Path]) -> None:
        """Read and attach these files (each on a thread of its own)."""
        for path in paths:
            self._start(Path(path).name, read_file, Path(path))

    def add_data(self, name: str, data: bytes, mime: str | None = None) -> None:
        """Read and attach ``data``, a file called ``name`` (pasted)."""
        self._start(name, _read_bytes, name, data, mime)

    def add_image(self, image: QImage) -> None:
        """Attach a clipboard image, as a PNG file."""
        buffer = QBuffer()
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        image.save(buffer, "PNG")  # type: ignore[call-overload]  # PySide takes a str here, its stub says bytes
        self._pasted += 1
        self.add_data(PASTED_IMAGE.format(n=self._pasted), bytes(QByteArray(buffer.data()).data()), "image/png")

    def add_mime(self, mime: QMimeData) -> bool:
        """Attach the local files or the image a drop or a paste carries; False when it carries neither."""
        paths = [url.toLocalFile() for url in mime.urls() if url.isLocalFile()]
        if paths:
            self.add_paths(paths)
            return True
        if mime.hasImage():
            image = QImage(mime.imageData())
            if not image.isNull():
                self.add_image(image)
                return True
        return False

    def remove(self, index: int) -> None:
        if 0 <= index < len(self.files):
            del self.files[index]
            self.changed.emit()

    def clear(self) -> None:
        """The message was sent: its files go with it (those still being read are dropped too)."""
        self._reading.clear()
        if self.files:
            self.files = []
            self.changed.emit()

    def _start(self, name: str, read: Callable[..., Attachment], *args: object) -> None:
        ticket, self._next = self._next, self._next + 1
        self._reading[ticket] = name
        relay = _ReadRelay()
        relay.read.connect(self._on_read)  # queued: in the GUI thread
        relay.failed.connect(self._on_failed)

        def target() -> None:
            try:
                attachment = read(*args)
                icon = scaled_image(attachment.data, CHIP_ICON_PX) if attachment.kind is AttachmentKind.IMAGE else None
                relay.read.emit(ticket, attachment, icon)
            except AttachmentError as exc:
                relay.failed.emit(ticket, str(exc))
            except Exception as exc:  # noqa: BLE001 - a file must never take the window down
                relay.failed.emit(ticket, f"{name} could not be read: {type(exc).__name__}: {exc}")
            finally:
                relay.deleteLater()

        thread = threading.Thread(target=target, name="attachment reader", daemon=True)
        hold(relay, thread)
        thread.start()

    def _on_read(self, ticket: int, attachment: Attachment, icon: QImage | None) -> None:
        if self._reading.pop(ticket, None) is not None:  # not sent or cleared meanwhile
            if icon is not None:
                self.icons[id(attachment)] = icon
            # in the order given, whichever was read first (a small file given after a large PDF)
            at = next((i for i, f in enumerate(self.files) if self._tickets.get(id(f), -1) > ticket), len(self.files))
            self._tickets[id(attachment)] = ticket
            self.files.insert(at, attachment)
            self.changed.emit()

    def _on_failed(self, ticket: int, message: str) -> None:
        if self._reading.pop(ticket, None) is not None:
            self.failed.emit(message)


class FileDrops(QObject):
    """Files dropped on a widget it filters (the window, the message box), and files or an image
    pasted into the message box (Ctrl+V), attached to the message; pasted text stays text."""

    def __init__(self, files: ComposerFiles, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.files = files

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove) and isinstance(event, QDragEnterEvent | QDropEvent):
            mime = event.mimeData()
            if any(url.isLocalFile() for url in mime.urls()) or mime.hasImage():
                event.acceptProposedAction()
                return True
        elif kind == QEvent.Type.Drop and isinstance(event, QDropEvent):
            if self.files.add_mime(event.mimeData()):
                event.acceptProposedAction()
                return True
        elif (
            kind == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.matches(QKeySequence.StandardKey.Paste)
        ):
            mime = QGuiApplication.clipboard().mimeData()
            return mime is not None and self.files.add_mime(mime)
        return False
