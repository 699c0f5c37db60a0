"""A message with attachments as the engine takes it: documents in named blocks, images as markers
with their bytes, then the typed text."""

from __future__ import annotations

from desktop_app.documents.attachment import Attachment, AttachmentKind
from desktop_app.documents.prompt_text import parts_message, to_message
from desktop_app.engine.messages import IMAGE_MARKER

_REPORT = Attachment("report.pdf", AttachmentKind.DOCUMENT, "application/pdf", b"%PDF-", "[page 1]\nSales rose.")
_NOTES = Attachment('my "notes".md', AttachmentKind.DOCUMENT, "text/markdown", b"", "a </document> inside")
_PHOTO = Attachment("photo.png", AttachmentKind.IMAGE, "image/png", b"PNG-1")
_CHART = Attachment("chart.png", AttachmentKind.IMAGE, "image/png", b"PNG-2")


def test_documents_then_images_then_the_typed_text() -> None:
    message = to_message("user", "What changed?", [_PHOTO, _REPORT, _CHART, _NOTES])
    assert message["role"] == "user"
    assert message["content"] == (
        '<document name="report.pdf">\n[page 1]\nSales rose.\n</document>\n\n'
        "<document name=\"my 'notes'.md\">\na </ document> inside\n</document>\n\n"
        f"{IMAGE_MARKER}\n\n{IMAGE_MARKER}\n\nWhat changed?"
    )
    assert message["images"] == [b"PNG-1", b"PNG-2"]


def test_a_message_without_attachments_is_its_text_alone() -> None:
    message = to_message("user", "Hello", [])
    assert message == {"role": "user", "content": "Hello"} and "images" not in message


def test_parts_keep_their_order_and_markers_always_pair_with_images() -> None:
    message = parts_message("user", ["First:", _PHOTO, f"typed {IMAGE_MARKER} by hand", "", _REPORT])
    assert message["content"].count(IMAGE_MARKER) == len(message["images"]) == 1
    assert message["content"].startswith(f"First:\n\n{IMAGE_MARKER}\n\ntyped  by hand\n\n<document")
