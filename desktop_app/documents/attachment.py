"""One file attached to a message, as every part of the app keeps it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class AttachmentKind(Enum):
    DOCUMENT = "document"  # read as text into the prompt (whole, or its ranked passages)
    IMAGE = "image"  # seen by a vision model (the target's projector)


class AttachmentError(ValueError):
    """A file that cannot be attached; its message is one line a user can act on, naming the file
    and what is wrong (format, size, a decoding bomb, a PDF without a text layer...)."""


@dataclass(frozen=True)
class Attachment:
    name: str  # the file's name, shown on its chip and in the answer's footer
    kind: AttachmentKind
    mime: str  # e.g. "application/pdf", "text/markdown", "image/png"
    data: bytes  # the file as given: kept in the history and exported, read again on import
    text: str = ""  # a document's text as read from it ("" for an image)
