"""A file read into an :class:`~.attachment.Attachment`: text files decoded, PDFs through their
text layer (pypdf), Word files (python-docx), images checked from their header
(:func:`desktop_app.engine.images.read_header`). The limits are declared here once; every refusal
is an :class:`~.attachment.AttachmentError` whose one line names the file and what to do.

The format is told by the file's first bytes (a PDF, a zip, an image's signature), then by the
mime type a client gave or the name's extension; anything else is read as text, and a file that
is not text (NUL bytes, undecodable) is refused. A PDF's pages are kept apart by
:data:`PAGE_MARKER` lines so a passage can name its pages (:mod:`.passages`).
"""

from __future__ import annotations

import codecs
import io
import logging
import mimetypes
import re
import zipfile
from pathlib import Path

from desktop_app.documents.attachment import Attachment, AttachmentError, AttachmentKind
from desktop_app.engine.images import MAX_IMAGE_BYTES, ImageError, read_header

MAX_FILE_BYTES = 64 * 2**20  # a document as given (a PDF of a few hundred pages with figures); images: MAX_IMAGE_BYTES
MAX_TEXT_CHARS = 4_000_000  # characters read out of one document (~1M tokens: far past any context, still searchable)
MAX_PDF_PAGES = 2_000  # pages of one PDF (pypdf reads each page's content stream)
MAX_UNZIPPED_BYTES = 256 * 2**20  # a Word file's parts once unzipped, from the zip's directory: a zip bomb is refused

PAGE_MARKER = "[page {number}]"  # the line before each PDF page's text
PAGE_MARKER_RE = re.compile(r"^\[page (\d+)\]$", re.MULTILINE)

PDF_MIME = "application/pdf"
DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_TEXT_MIMES = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
}
_IMAGE_SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")
_IMAGE_EXTENSIONS = {".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp"}
_OLD_OFFICE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # .doc, .xls, .ppt (OLE2)
_UTF_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_SUPPORTED = "plain text, Markdown, code, CSV, JSON, PDF, Word (.docx) or an image"


def read_file(path: str | Path) -> Attachment:
    """The file at ``path`` read as :func:`read_attachment` reads it (its size checked before it is read)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise AttachmentError(_too_large(path.name, size))
        data = path.read_bytes()
    except OSError as e:
        raise AttachmentError(f"{path.name} could not be read: {e.strerror or e}") from None
    return read_attachment(path.name, data)


def read_attachment(name: str, data: bytes, mime: str | None = None) -> Attachment:
    """``data``, a file called ``name`` (``mime``: the type a client declared, if any), read as a
    document (its text) or an image (checked, not decoded); AttachmentError if it cannot be."""
    kind = _format(name, data, (mime or "").split(";")[0].strip().lower())
    if kind == "image":
        try:
            header = read_header(data)
        except ImageError as e:
            raise AttachmentError(f"{name}: {e}") from None
        return Attachment(name, AttachmentKind.IMAGE, header.mime, data)
    if len(data) > MAX_FILE_BYTES:
        raise AttachmentError(_too_large(name, len(data)))
    if kind == "pdf":
        text, doc_mime = _pdf_text(name, data), PDF_MIME
    elif kind == "docx":
        text, doc_mime = _docx_text(name, data), DOCX_MIME
    else:
        text, doc_mime = _plain_text(name, data), _text_mime(name, mime)
    if len(text) > MAX_TEXT_CHARS:
        raise AttachmentError(_too_long(name))
    if not text.strip():
        raise AttachmentError(f"{name} is empty: there is no text to read in it")
    return Attachment(name, AttachmentKind.DOCUMENT, doc_mime, data, text)


def _format(name: str, data: bytes, mime: str) -> str:
    """'pdf', 'docx', 'image' or 'text': the content's signature first, then the declared type."""
    suffix = Path(name).suffix.lower()
    if data.startswith(b"%PDF-"):
        return "pdf"
    if data.startswith(b"PK\x03\x04"):
        return "docx"  # _docx_text refuses other zips (xlsx, pptx, odt...) by what is inside
    if data.startswith(_IMAGE_SIGNATURES) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP"):
        return "image"
    if data.startswith(_OLD_OFFICE):
        raise AttachmentError(f"{name} is in an old Office format (.doc, .xls, .ppt): save it as .docx, PDF or text")
    if mime.startswith("image/") or suffix in _IMAGE_EXTENSIONS:
        return "image"  # BMP has no strong signature; read_header says if it is not one
    if mime == PDF_MIME or suffix == ".pdf":
        raise AttachmentError(f"{name} is not a PDF (it does not start with %PDF-): attach the file itself")
    if mime == DOCX_MIME or suffix == ".docx":
        raise AttachmentError(f"{name} is not a Word .docx file (not a zip): save it again as .docx or PDF")
    return "text"


def _plain_text(name: str, data: bytes) -> str:
    for bom, encoding in _UTF_BOMS:
        if data.startswith(bom):
            try:
                return _normalized(data.decode(encoding))
            except UnicodeDecodeError:
                raise AttachmentError(f"{name} is not valid {encoding.upper()} text: save it as UTF-8") from None
    if b"\x00" in data[:65536]:
        raise AttachmentError(f"{name} is a binary file, not text: attach {_SUPPORTED}")
    try:
        return _normalized(data.decode("utf-8"))
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("cp1252")  # the usual legacy encoding of Windows text files
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    if sum(1 for c in text[:65536] if c < " " and c not in "\t\n\r\f") > len(text[:65536]) // 100:
        raise AttachmentError(f"{name} is a binary file, not text: attach {_SUPPORTED}")
    return _normalized(text)


def _normalized(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _text_mime(name: str, declared: str | None) -> str:
    declared = (declared or "").split(";")[0].strip().lower()
    if declared and not declared.startswith("application/octet-stream"):
        return declared
    suffix = Path(name).suffix.lower()
    guessed = _TEXT_MIMES.get(suffix) or mimetypes.guess_type(f"x{suffix}")[0]
    return guessed if guessed and (guessed.startswith("text/") or guessed.startswith("application/")) else "text/plain"


def _pdf_text(name: str, data: bytes) -> str:
    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # a damaged but readable file is not news to the user
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise AttachmentError(f"{name} is protected by a password: save an unprotected copy and attach that")
        if len(reader.pages) > MAX_PDF_PAGES:
            raise AttachmentError(
                f"{name} has {len(reader.pages):,} pages, more than the {MAX_PDF_PAGES:,} allowed: attach a part of it"
            )
        pages: list[str] = []
        read = 0
        for number, page in enumerate(reader.pages, start=1):
            text = _normalized(page.extract_text() or "").strip()
            read += len(text)
            if read > MAX_TEXT_CHARS:
                raise AttachmentError(_too_long(name))
            pages.append(f"{PAGE_MARKER.format(number=number)}\n{text}" if text else PAGE_MARKER.format(number=number))
    except AttachmentError:
        raise
    except Exception as e:  # noqa: BLE001 - a damaged file makes pypdf fail in many ways, none of them the user's to read
        raise AttachmentError(
            f"{name} is not a readable PDF ({type(e).__name__}): export it again or attach its text"
        ) from None
    if read == 0:
        raise AttachmentError(
            f"{name} has no text layer (a scan?): run it through OCR or copy its text, then attach that"
        )
    return "\n\n".join(pages)


def _docx_text(name: str, data: bytes) -> str:
    import docx
    from docx.table import Table

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
            unzipped = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, ValueError, OSError):
        raise AttachmentError(f"{name} is a damaged zip file: save it again as .docx or PDF") from None
    if "word/document.xml" not in names:
        raise AttachmentError(f"{name} is a zip file but not a Word document: attach {_SUPPORTED}")
    if unzipped > MAX_UNZIPPED_BYTES:
        raise AttachmentError(
            f"{name} unzips to {unzipped / 2**20:,.0f} MB, more than the {MAX_UNZIPPED_BYTES // 2**20} MB allowed "
            "(a zip bomb?): save it again as PDF or text"
        )
    try:
        document = docx.Document(io.BytesIO(data))
        blocks: list[str] = []
        for block in document.iter_inner_content():
            if isinstance(block, Table):
                blocks.extend("\t".join(cell.text for cell in row.cells) for row in block.rows)
                continue
            style = (block.style.name if block.style is not None else "") or ""
            level = style.removeprefix("Heading ")
            prefix = "#" * int(level) + " " if level.isdigit() and style.startswith("Heading") else ""
            blocks.append(prefix + block.text)
    except Exception as e:  # noqa: BLE001 - lxml's and python-docx's errors for a damaged file, all alike to the user
        raise AttachmentError(
            f"{name} is not a readable Word file ({type(e).__name__}): save it again as .docx or PDF"
        ) from None
    return _normalized("\n\n".join(b for b in blocks if b.strip()))


def _too_large(name: str, size: int) -> str:
    return f"{name} is {_size(size)}, more than the {_size(MAX_FILE_BYTES)} allowed: attach a part of it"


def _size(n: int) -> str:
    return f"{n / 2**20:,.1f} MB".replace(".0 MB", " MB") if n >= 2**20 else f"{n:,} bytes"


def _too_long(name: str) -> str:
    return f"{name} has more than {MAX_TEXT_CHARS:,} characters of text, more than SpecChat reads: attach a part of it"


__all__ = ["MAX_FILE_BYTES", "MAX_IMAGE_BYTES", "read_attachment", "read_file"]
