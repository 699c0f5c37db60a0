"""Documents and images in API requests, through the real server and engine and the official
SDKs: a file part, an ``input_file`` and a ``document`` block put the document's text in the prompt
as the window does; bad parts are a 400 in one line naming the part; a decompression bomb is
refused at once and a 2 GB body is a 413 before the server has read or kept more than its limit."""

from __future__ import annotations

import base64
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2 as httpx
import openai
import psutil
import pytest

from desktop_app.documents.prompt_text import to_message
from desktop_app.documents.reading import read_attachment
from desktop_app.server.engine_backend import EngineBackend
from desktop_app.server.limits import DEFAULT_LIMITS
from tests.documents.files import make_pdf, make_png, make_png_bomb
from tests.server.live_server import Server

QUESTION = "What is the secret word?"
REPORT = make_pdf(["The quarterly report.", "The secret word is PLUM, said twice: PLUM."])
PDF_URL = "data:application/pdf;base64," + base64.b64encode(REPORT).decode()
WRAPPED_PDF_URL = "data:application/pdf;base64," + base64.encodebytes(REPORT).decode()  # lines of 76, as MIME has them


@pytest.fixture(scope="module")
def server(backend: EngineBackend) -> Iterator[Server]:
    served = Server(backend)
    yield served
    served.stop()


@pytest.fixture()
def gpt(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)


@pytest.fixture()
def claude(server: Server) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.base, api_key="none", max_retries=0, timeout=120)


def _typed_prompt_tokens(gpt: openai.OpenAI, content: str) -> int:
    reply = gpt.chat.completions.create(
        model="x", messages=[{"role": "user", "content": content}], max_tokens=1, extra_body={"temperature": 0}
    )
    assert reply.usage is not None
    return reply.usage.prompt_tokens


def test_a_pdf_file_part_puts_its_pages_in_the_prompt(gpt: openai.OpenAI) -> None:
    as_window_sends = to_message("user", QUESTION, [read_attachment("report.pdf", REPORT)])["content"]
    assert "The secret word is PLUM" in as_window_sends and "[page 2]" in as_window_sends
    reply = gpt.chat.completions.create(
        model="x",
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "file", "file": {"filename": "report.pdf", "file_data": PDF_URL}},
                    {"type": "text", "text": QUESTION},
                ],
            }
        ],
        max_tokens=1,
        extra_body={"temperature": 0},
    )
    assert reply.usage is not None
    assert reply.usage.prompt_tokens == _typed_prompt_tokens(gpt, as_window_sends)
    assert reply.usage.prompt_tokens > _typed_prompt_tokens(gpt, QUESTION) + 20

    answer = gpt.responses.create(
        model="x",
        input=[
            {
                "role": "user",
                "content": [
                    {"type": "input_file", "filename": "report.pdf", "file_data": WRAPPED_PDF_URL},
                    {"type": "input_text", "text": QUESTION},
                ],
            }
        ],
        max_output_tokens=16,
    )
    assert answer.usage is not None and answer.usage.input_tokens == reply.usage.prompt_tokens


def test_anthropic_document_blocks_are_counted_and_answered(claude: anthropic.Anthropic, gpt: openai.OpenAI) -> None:
    pdf = {"type": "base64", "media_type": "application/pdf", "data": base64.b64encode(REPORT).decode()}
    text = {"type": "text", "media_type": "text/plain", "data": "The secret word is FIG."}
    for source, name, attached in ((pdf, "report.pdf", REPORT), (text, "note.txt", b"The secret word is FIG.")):
        content: list[anthropic.types.ContentBlockParam] = [
            {"type": "document", "source": source, "title": name},  # type: ignore[typeddict-item]
            {"type": "text", "text": QUESTION},
        ]
        counted = claude.messages.count_tokens(model="x", messages=[{"role": "user", "content": content}])
        typed = to_message("user", QUESTION, [read_attachment(name, attached)])["content"]
        assert (
            counted.input_tokens
            == claude.messages.count_tokens(model="x", messages=[{"role": "user", "content": typed}]).input_tokens
        )
        answer = claude.messages.create(model="x", max_tokens=4, messages=[{"role": "user", "content": content}])
        assert answer.usage.input_tokens == _typed_prompt_tokens(gpt, typed)


def _bad_part(part: dict[str, object]) -> list[dict[str, object]]:
    return [{"role": "user", "content": [{"type": "text", "text": QUESTION}, part]}]


@pytest.mark.parametrize(
    ("part", "said"),
    [
        ({"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}, "SpecChat fetches nothing"),
        ({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR%%%"}}, "not valid base64"),
        ({"type": "image_url", "image_url": {"url": "data:text/plain;base64,aGk="}}, "image media type"),
        (
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(b"GIF8").decode()}},
            "not an image",
        ),
        (
            {"type": "file", "file": {"filename": "scan.pdf", "file_data": PDF_URL.replace(
                base64.b64encode(REPORT).decode(), base64.b64encode(make_pdf(["", ""])).decode())}},
            "scan.pdf has no text layer (a scan?)",
        ),
        ({"type": "file", "file": {"file_id": "file-abc123"}}, "file ids are not served"),
        ({"type": "input_audio", "input_audio": {"data": "", "format": "wav"}}, "input_audio parts are not supported"),
    ],
)  # fmt: skip
def test_a_bad_part_is_a_400_naming_it(gpt: openai.OpenAI, part: dict[str, object], said: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        gpt.chat.completions.create(model="x", messages=_bad_part(part), max_tokens=1)  # type: ignore[arg-type]
    message = caught.value.body["message"]  # type: ignore[index]
    assert message.startswith("message 1, part 2: ") and said in message and "\n" not in message


def test_anthropic_refuses_what_it_cannot_take_in_one_line(claude: anthropic.Anthropic) -> None:
    cases = [
        (
            {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
            "a url source is not served",
        ),
        ({"type": "image", "source": {"type": "base64", "media_type": "image/tiff", "data": "AA=="}}, "media_type"),
        (
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBER"}},
            "base64",
        ),
    ]
    for block, said in cases:
        messages: Any = [{"role": "user", "content": [block]}]
        with pytest.raises(anthropic.BadRequestError) as caught:
            claude.messages.create(model="x", max_tokens=1, messages=messages)
        assert "messages.0.content.0: " in str(caught.value) and said in str(caught.value)


def test_a_decompression_bomb_is_refused_before_it_is_decoded(gpt: openai.OpenAI, claude: anthropic.Anthropic) -> None:
    bomb = base64.b64encode(make_png_bomb()).decode()  # 900 Mpx in ~100 KB
    started = time.monotonic()
    with pytest.raises(openai.BadRequestError, match="pixels allowed"):
        part = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{bomb}"}}
        gpt.chat.completions.create(model="x", messages=_bad_part(part), max_tokens=1)  # type: ignore[arg-type]
    with pytest.raises(anthropic.BadRequestError, match="pixels allowed"):
        messages: Any = [{"role": "user", "content": [{"type": "image", "source": {
            "type": "base64", "media_type": "image/png", "data": bomb}}]}]  # fmt: skip
        claude.messages.create(model="x", max_tokens=1, messages=messages)
    assert time.monotonic() - started < 3


def test_a_2_gb_data_url_is_a_413_in_bounded_time_and_memory(server: Server) -> None:
    rss = psutil.Process().memory_info().rss
    head = b'{"model": "x", "max_tokens": 1, "messages": [{"role": "user", "content": [{"type": "image_url", '
    head += b'"image_url": {"url": "data:image/png;base64,'
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:  # declared: refused unread
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n")
        sock.sendall(b"Content-Length: %d\r\n\r\n" % (2 * 2**30) + head)
        assert sock.recv(65536).startswith(b"HTTP/1.1 413")
    assert time.monotonic() - started < 2

    sent = 0

    def two_gigabytes() -> Iterator[bytes]:  # chunked, no length: the reader stops at the limit
        nonlocal sent
        yield head
        chunk = b"A" * 2**20
        while sent < 2 * 2**30:
            sent += len(chunk)
            yield chunk

    peak = rss
    sampling = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not sampling.wait(0.02):
            peak = max(peak, psutil.Process().memory_info().rss)

    sampler = threading.Thread(target=sample)
    sampler.start()
    started = time.monotonic()
    try:
        reply = httpx.post(f"{server.url}/chat/completions", content=two_gigabytes(), timeout=30)
    finally:
        sampling.set()
        sampler.join()
    assert reply.status_code == 413 and "larger than 32 MiB" in reply.json()["error"]["message"]
    assert time.monotonic() - started < 10 and sent < 8 * DEFAULT_LIMITS.max_body_bytes
    assert peak - rss < 4 * DEFAULT_LIMITS.max_body_bytes, f"the server grew by {(peak - rss) / 2**20:.0f} MiB"


def test_a_20_mb_image_fits_the_body_limit() -> None:
    image = make_png(16, 16) + b"\0" * (20 * 2**20 - 1000)  # trailing bytes: still a 16 x 16 PNG
    assert len(base64.b64encode(image)) + 1000 < DEFAULT_LIMITS.max_body_bytes
    assert read_attachment("big.png", image).mime == "image/png"
