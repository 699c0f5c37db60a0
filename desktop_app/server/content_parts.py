"""Images and files in a request's messages, in each API's shape, read into the texts and
attachments :func:`desktop_app.documents.prompt_text.parts_message` makes one message of.

- OpenAI chat: ``text``, ``image_url`` (``{"url": "data:image/png;base64,..."}``) and ``file``
  (``{"file": {"filename", "file_data": "data:...;base64,..."}}``) parts;
- OpenAI Responses: ``input_text``, ``input_image`` (``image_url``: a data URL) and ``input_file``
  (``filename``, ``file_data``) parts;
- Anthropic: ``text``, ``image`` (``source``: base64 with its ``media_type``) and ``document``
  blocks (``source``: a base64 PDF, plain ``text``, or ``content`` blocks; ``title`` names it).

SpecChat fetches nothing: a remote URL, a file id or a URL source is refused by name. Every file
goes through :func:`desktop_app.documents.reading.read_attachment` (its limits, bombs, a PDF
without a text layer), so each refusal is a 400 in one line that names the part and the file.
"""

from __future__ import annotations

import base64
import binascii
import re
import urllib.parse
from typing import Any

from desktop_app.documents.attachment import Attachment, AttachmentError, AttachmentKind
from desktop_app.documents.prompt_text import parts_message
from desktop_app.documents.reading import MAX_FILE_BYTES, read_attachment
from desktop_app.engine.api import Message
from desktop_app.server.errors import BadRequest

Part = str | Attachment
ANTHROPIC_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")  # the four Anthropic's API takes
TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
_WHITESPACE = re.compile(r"\s+")
NOT_FETCHED = "SpecChat fetches nothing: send the file itself as a data URL (data:<type>;base64,...)"


def message_of(role: str, parts: list[Part], where: str, param: str | None = None) -> Message:
    """The message made of ``parts``: adjacent texts joined as they are (a text-only content is
    its texts, unchanged), attachments in their places; only a user message may carry them."""
    joined: list[Part] = []
    for part in parts:
        if isinstance(part, str) and joined and isinstance(joined[-1], str):
            joined[-1] += part
        else:
            joined.append(part)
    if all(isinstance(p, str) for p in joined):
        return Message(role=role, content="".join(p for p in joined if isinstance(p, str)))
    if role != "user":
        raise BadRequest(f"{where}: only a user message may carry images and files, not a {role} message", param)
    return parts_message(role, joined)


def openai_parts(parts: list[Any], where: str, param: str) -> list[Part]:
    """OpenAI's content parts (chat and Responses) as texts and attachments; BadRequest naming the part."""
    out: list[Part] = []
    for j, part in enumerate(parts):
        at = f"{where}, part {j + 1}"
        kind = _type(part)
        if kind in TEXT_PART_TYPES and isinstance(part.get("text"), str):
            out.append(part["text"])
        elif kind in ("image_url", "input_image"):
            url = part.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url
            if not isinstance(url, str):
                raise BadRequest(f"{at}: an {kind} part needs its image as a data URL ({NOT_FETCHED})", param)
            out.append(_image(f"image {j + 1}", *_data_url(url, at, param), at, param))
        elif kind in ("file", "input_file"):
            file = part.get("file") if kind == "file" else part
            out.append(_openai_file(file, j, at, param))
        else:
            raise BadRequest(
                f"{at}: {kind or 'a part without a type'} parts are not supported (text, images, files)", param
            )
    return out


def _openai_file(file: object, j: int, at: str, param: str) -> Attachment:
    if not isinstance(file, dict) or not isinstance(file.get("file_data"), str):
        if isinstance(file, dict) and "file_id" in file:
            raise BadRequest(
                f"{at}: file ids are not served (SpecChat keeps no uploads): send 'file_data' instead", param
            )
        if isinstance(file, dict) and "file_url" in file:
            raise BadRequest(f"{at}: a file_url is not fetched; {NOT_FETCHED}", param)
        raise BadRequest(f"{at}: a file part needs 'file_data', the file as a data URL (data:<type>;base64,...)", param)
    filename = file.get("filename")
    name = filename if isinstance(filename, str) and filename.strip() else f"file {j + 1}"
    mime, data = _data_url(file["file_data"], at, param)
    return _read(name, data, mime, at, param)


def anthropic_blocks(blocks: list[Any], where: str) -> list[Part]:
    """Anthropic's content blocks (text, image, document) as texts and attachments."""
    out: list[Part] = []
    for j, block in enumerate(blocks):
        at = f"{where}.{j}"
        kind = _type(block)
        if kind == "text" and isinstance(block.get("text"), str):
            out.append(block["text"])
        elif kind == "image":
            mime, data = _anthropic_base64(block.get("source"), ANTHROPIC_IMAGE_TYPES, at)
            out.append(_image(f"image {j + 1}", mime, data, at, None))
        elif kind == "document":
            out.append(_anthropic_document(block, j, at))
        else:
            raise BadRequest(
                f"{at}: {kind or 'a block without a type'} blocks are not supported here (text, image, document)"
            )
    return out


def _anthropic_document(block: dict[str, Any], j: int, at: str) -> Attachment:
    title = block.get("title")
    name = title if isinstance(title, str) and title.strip() else f"document {j + 1}"
    source = block.get("source")
    kind = _type(source)
    if kind == "text" and isinstance(source, dict) and isinstance(source.get("data"), str):
        data, mime = source["data"].encode(), "text/plain"
    elif kind == "content" and isinstance(source, dict):
        content = source.get("content")
        texts = [content] if isinstance(content, str) else content if isinstance(content, list) else None
        if texts is None or not all(
            isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text") for b in texts
        ):
            raise BadRequest(f"{at}: a content source holds a string or text blocks")
        data, mime = "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in texts).encode(), "text/plain"
    else:
        mime, data = _anthropic_base64(source, ("application/pdf",), at)
    return _read(name, data, mime, at, None)


def _anthropic_base64(source: object, types: tuple[str, ...], at: str) -> tuple[str, bytes]:
    if not isinstance(source, dict) or source.get("type") != "base64":
        kind = _type(source)
        refused = f"a {kind} source is not served: {NOT_FETCHED.split(':')[0]}; " if kind in ("url", "file") else ""
        raise BadRequest(f"{at}: {refused}the source must be {{type: base64, media_type, data}}")
    mime = source.get("media_type")
    if mime not in types:
        raise BadRequest(f"{at}: the media_type must be one of {', '.join(types)}, not {mime!r}")
    return str(mime), _base64(source.get("data"), at, None)


def _type(value: object) -> str | None:
    """A part's, block's or source's ``type``, when it is a string."""
    kind = value.get("type") if isinstance(value, dict) else None
    return kind if isinstance(kind, str) else None


def _data_url(url: str, at: str, param: str | None) -> tuple[str, bytes]:
    """(media type, bytes) of a ``data:`` URL; BadRequest for a remote URL or a bad one."""
    if not url.startswith("data:"):
        shown = url[:40] + ("..." if len(url) > 40 else "")
        raise BadRequest(f"{at}: {shown!r} is not a data URL; {NOT_FETCHED}", param)
    head, comma, payload = url[5:].partition(",")
    if not comma:
        raise BadRequest(f"{at}: the data URL has no ',' before its data", param)
    mime, *options = head.split(";")
    if "base64" in options:
        return mime.strip().lower(), _base64(payload, at, param)
    _check_size(len(payload), at, param)
    return mime.strip().lower(), urllib.parse.unquote_to_bytes(payload)


def _base64(value: object, at: str, param: str | None) -> bytes:
    if not isinstance(value, str):
        raise BadRequest(f"{at}: the data must be a base64 string", param)
    _check_size(len(value) * 3 // 4, at, param)
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        pass
    try:  # wrapped at 76 characters, as `base64` and MIME write it
        return base64.b64decode(_WHITESPACE.sub("", value), validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest(f"{at}: the data is not valid base64", param) from None


def _check_size(size: int, at: str, param: str | None) -> None:
    if size > MAX_FILE_BYTES:
        raise BadRequest(
            f"{at}: the file is {size / 2**20:,.0f} MB, more than the {MAX_FILE_BYTES // 2**20} MB allowed", param
        )


def _image(name: str, mime: str, data: bytes, at: str, param: str | None) -> Attachment:
    if not mime.startswith("image/"):
        raise BadRequest(
            f"{at}: an image must have an image media type (data:image/png;base64,...), not {mime!r}", param
        )
    image = _read(f"{name}.{mime.removeprefix('image/')}", data, mime, at, param)
    if image.kind is not AttachmentKind.IMAGE:
        raise BadRequest(f"{at}: the data is not an image (PNG, JPEG, WebP, GIF or BMP)", param)
    return image


def _read(name: str, data: bytes, mime: str, at: str, param: str | None) -> Attachment:
    try:
        return read_attachment(name, data, mime)
    except AttachmentError as e:
        raise BadRequest(f"{at}: {e}", param) from None
