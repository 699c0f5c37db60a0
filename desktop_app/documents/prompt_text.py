"""A user's message with its attachments, as the engine takes it: one :class:`Message`.

Each document's text is inlined in one block that names the file (:data:`DOCUMENT_BLOCK`), in
the order attached, then each image as an :data:`~desktop_app.engine.messages.IMAGE_MARKER` with
its bytes in ``images``, then the text the user typed. A document too large for the prompt is
passed with its chosen passages as its text (``dataclasses.replace(attachment, text=...)``, from
:func:`desktop_app.documents.passages.choose_passages`).

The prompt text is derived, never parsed back: the window and the history keep the typed text and
the attachments apart and build the message again with :func:`to_message` whenever it is sent.
"""

from __future__ import annotations

from collections.abc import Sequence

from desktop_app.documents.attachment import Attachment, AttachmentKind
from desktop_app.engine.messages import IMAGE_MARKER, Message

# How a document stands in the prompt: its name, then its text, between tags a model reads as a
# boundary (Anthropic's own advice for long documents; models of every family follow it).
DOCUMENT_BLOCK = '<document name="{name}">\n{text}\n</document>'
_CLOSING_TAG = "</document>"


def document_block(name: str, text: str) -> str:
    """One document as it stands in the prompt; a closing tag inside its text is broken so the
    document cannot end its own block early, and a quote in its name cannot end the name."""
    return DOCUMENT_BLOCK.format(name=name.replace('"', "'"), text=text.replace(_CLOSING_TAG, "</ document>"))


def to_message(role: str, typed_text: str, attachments: Sequence[Attachment]) -> Message:
    """The message ``role`` sends: its documents' blocks, its images' markers, then ``typed_text``."""
    documents = [a for a in attachments if a.kind is AttachmentKind.DOCUMENT]
    images = [a for a in attachments if a.kind is AttachmentKind.IMAGE]
    return parts_message(role, [*documents, *images, typed_text])


def parts_message(role: str, parts: Sequence[str | Attachment]) -> Message:
    """The message made of ``parts`` in their order (as an API request gives them): a text as it
    is, a document as its block, an image as a marker with its bytes in ``images`` (present only
    when there are images); the parts separated by a blank line, empty texts left out. A marker
    written in a text is taken out so that markers and images always pair."""
    texts: list[str] = []
    images: list[bytes] = []
    for part in parts:
        if isinstance(part, str):
            if part:
                texts.append(part.replace(IMAGE_MARKER, ""))
        elif part.kind is AttachmentKind.IMAGE:
            images.append(part.data)
            texts.append(IMAGE_MARKER)
        else:
            texts.append(document_block(part.name, part.text.replace(IMAGE_MARKER, "")))
    message = Message(role=role, content="\n\n".join(texts))
    if images:
        message["images"] = images
    return message
