"""Files read into attachments: each format's text as a user would want it in the prompt, and each
bad file refused in one line that names it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from desktop_app.documents import reading
from desktop_app.documents.attachment import AttachmentError, AttachmentKind
from desktop_app.documents.reading import read_attachment, read_file
from tests.documents.files import make_docx, make_pdf, make_png, make_png_bomb, make_zip_bomb


def _refusal(name: str, data: bytes, mime: str | None = None) -> str:
    with pytest.raises(AttachmentError) as caught:
        read_attachment(name, data, mime)
    message = str(caught.value)
    assert name in message and "\n" not in message
    return message


@pytest.mark.parametrize(
    ("name", "encoded", "mime"),
    [
        ("notes.md", "# Title\r\n\r\nCafé au lait\r\n".encode(), "text/markdown"),
        ("table.csv", "a,b\nnaïve,2\n".encode("utf-8-sig"), "text/csv"),
        ("log.txt", "grüße\n".encode("utf-16"), "text/plain"),
        ("legacy.txt", "“quoted” café\n".encode("cp1252"), "text/plain"),
        ("main.py", b"def f():\n    return 1\n", "text/x-python"),
        ("data.json", b'{"k": "v"}', "application/json"),
    ],
)
def test_text_files_are_decoded_whatever_their_encoding(name: str, encoded: bytes, mime: str) -> None:
    attachment = read_attachment(name, encoded)
    assert attachment.kind is AttachmentKind.DOCUMENT and attachment.mime == mime
    assert "\r" not in attachment.text and "\ufeff" not in attachment.text
    for word in ("Café", "naïve", "grüße", "“quoted” café", "return 1", '"k"'):
        if word.encode("utf-8") in encoded or word.encode("utf-16-le") in encoded or word.encode("cp1252") in encoded:
            assert word in attachment.text


def test_a_pdf_is_read_page_by_page_with_its_page_numbers() -> None:
    attachment = read_attachment("report.pdf", make_pdf(["Revenue grew (a lot) in March.", "", "Costs fell in May."]))
    assert attachment.mime == "application/pdf" and attachment.data.startswith(b"%PDF-")
    text = attachment.text
    assert "[page 1]\nRevenue grew (a lot) in March." in text and "[page 3]\nCosts fell in May." in text
    assert [int(n) for n in reading.PAGE_MARKER_RE.findall(text)] == [1, 2, 3]


def test_a_pdf_without_a_text_layer_is_refused_as_a_scan() -> None:
    assert "report.pdf has no text layer (a scan?)" in _refusal("report.pdf", make_pdf(["", ""]))


def test_a_word_file_keeps_its_headings_paragraphs_and_tables() -> None:
    data = make_docx(["First point.", "Second point."], heading="Plan", table=[["name", "age"], ["Ada", "36"]])
    attachment = read_attachment("plan.docx", data)
    assert attachment.text == "# Plan\n\nFirst point.\n\nSecond point.\n\nname\tage\n\nAda\t36"


@pytest.mark.slow  # measures time (and zips 266 MB of zeros to make the bomb)
def test_a_zip_bomb_is_refused_from_the_zip_directory_at_once() -> None:
    bomb = make_zip_bomb(reading.MAX_UNZIPPED_BYTES // 2**20 + 10)
    assert len(bomb) < 2**20
    started = time.monotonic()
    assert "(a zip bomb?)" in _refusal("huge.docx", bomb)
    assert time.monotonic() - started < 1


def test_images_are_checked_from_their_header_and_bombs_refused() -> None:
    image = read_attachment("photo.png", make_png(64, 48))
    assert image.kind is AttachmentKind.IMAGE and image.mime == "image/png" and image.text == ""
    assert "pixels allowed" in _refusal("bomb.png", make_png_bomb())  # refused in bounded time: test_attachments_api
    assert "not an image" in _refusal("fake.png", b"just some text")


@pytest.mark.parametrize(
    ("name", "data", "mime", "said"),
    [
        ("tool.exe", b"MZ\x90\x00\x03\x00\x00\x00" * 100, None, "binary file"),
        ("old.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 100, None, "old Office format"),
        ("fake.pdf", b"hello", None, "is not a PDF"),
        ("fake", b"hello", "application/pdf", "is not a PDF"),
        ("sheet.xlsx", make_zip_bomb(0).replace(b"word/document.xml", b"xl/workbook.xml__"), None, "not a Word"),
        ("broken.pdf", b"%PDF-1.4\n garbage", None, "not a readable PDF"),
        ("empty.txt", b"  \n", None, "is empty"),
    ],
)
def test_files_that_cannot_be_read_are_refused_in_one_line(name: str, data: bytes, mime: str | None, said: str) -> None:
    assert said in _refusal(name, data, mime)


def test_limits_refuse_a_file_before_reading_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.log"
    path.write_bytes(b"line\n" * 1000)
    assert read_file(path).text.startswith("line\nline")
    monkeypatch.setattr(reading, "MAX_FILE_BYTES", 1000)
    with pytest.raises(AttachmentError, match=r"big.log is 5,000 bytes, more than the 1,000 bytes allowed"):
        read_file(path)
    monkeypatch.setattr(reading, "MAX_FILE_BYTES", 10**6)
    monkeypatch.setattr(reading, "MAX_TEXT_CHARS", 100)
    with pytest.raises(AttachmentError, match="big.log has more than 100 characters"):
        read_file(path)
    with pytest.raises(AttachmentError, match="long.pdf has more than 100 characters"):
        read_attachment("long.pdf", make_pdf(["x" * 60, "y" * 60]))
    monkeypatch.setattr(reading, "MAX_PDF_PAGES", 2)
    with pytest.raises(AttachmentError, match="many.pdf has 3 pages, more than the 2 allowed"):
        read_attachment("many.pdf", make_pdf(["a", "b", "c"]))
    with pytest.raises(AttachmentError, match="missing.txt could not be read"):
        read_file(tmp_path / "missing.txt")
