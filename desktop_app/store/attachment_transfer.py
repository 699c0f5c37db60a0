"""A message's files in a conversation export (:mod:`desktop_app.store.export`) and back.

Each file is written as ``{"name", "kind", "mime", "data": base64 of the file, "text": what the
model read of it}``. On import every file is read again as if it had just been attached
(:func:`~desktop_app.documents.reading.read_attachment`: its format, size and, for an image, its
header's limits), so a file the window would refuse is refused here too, in one line that names
the message and the file; the text the model read (the whole document, or its chosen passages)
is kept as exported.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from desktop_app.documents.attachment import Attachment, AttachmentError, AttachmentKind
from desktop_app.documents.reading import read_attachment
from desktop_app.store.errors import StoreError

MAX_ATTACHMENTS = 64  # files attached to one message in an export


def files_json(files: Sequence[Attachment]) -> list[dict[str, str]]:
    """A message's files as an export writes them."""
    return [
        {
            "name": f.name,
            "kind": f.kind.value,
            "mime": f.mime,
            "data": base64.b64encode(f.data).decode("ascii"),
            "text": f.text,
        }
        for f in files
    ]


def files_from_json(value: Any, number: int, max_chars: int) -> list[Attachment]:
    """The files of message ``number`` in an export, each read again; StoreError (one line) for
    the first that is not a file SpecChat would attach."""
    where = f"message {number}'s attachments"
    if not isinstance(value, list) or len(value) > MAX_ATTACHMENTS:
        raise StoreError(f"{where} must be a list of at most {MAX_ATTACHMENTS} files")
    files: list[Attachment] = []
    for item in value:
        name = item.get("name") if isinstance(item, dict) else None
        data, text = (item.get("data"), item.get("text", "")) if isinstance(item, dict) else (None, None)
        if not isinstance(name, str) or not name.strip() or not isinstance(data, str) or not isinstance(text, str):
            raise StoreError(f"{where}: each needs a name, its data in base64 and a text")
        shown = name[:120]
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise StoreError(f"message {number}'s attachment {shown} is not valid base64") from None
        mime = item.get("mime") if isinstance(item.get("mime"), str) else None
        try:
            read = read_attachment(name, raw, mime)
        except AttachmentError as exc:
            raise StoreError(f"message {number}'s attachment {shown} cannot be attached: {exc}") from None
        if len(text) > max_chars:
            raise StoreError(f"message {number}'s attachment {shown} has a text of {len(text):,} characters")
        # what the model read of a document (its passages, maybe), as exported; an image has none
        files.append(replace(read, text=text) if read.kind is AttachmentKind.DOCUMENT and text else read)
    return files
