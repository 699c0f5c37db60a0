"""Images through the API to a vision model (the factory's, its projector beside it), with the
official SDKs: an ``image_url`` part, an ``input_image`` and an Anthropic ``image`` block are
seen (two images answered differently, the image's positions counted) and a 20 MB image fits the
body; a model without a projector refuses an image in one line."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from typing import Any

import anthropic
import numpy as np
import openai
import pytest
from PIL import Image

from desktop_app.server.engine_backend import EngineBackend
from tests.factory_vision import IMAGE_TOKENS
from tests.server.conftest import serving
from tests.server.live_server import Server

QUESTION = "Describe this picture in a few words."


def png(seed: int, pad_to: int = 0) -> bytes:
    """A PNG of seeded random pixels (``pad_to``: bytes after its end, to make a file that large)."""
    pixels = np.random.default_rng(seed).integers(0, 256, (30, 40, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "PNG")
    data = out.getvalue()
    return data + b"\0" * max(0, pad_to - len(data))


def data_url(image: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(image).decode()


@pytest.fixture(scope="module")
def server(vision_model: Any) -> Iterator[Server]:
    with serving(vision_model.model) as served:
        yield served


@pytest.fixture()
def gpt(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)


def _chat(gpt: openai.OpenAI, image: bytes | None, max_tokens: int = 8) -> Any:
    content: list[dict[str, Any]] = [{"type": "text", "text": QUESTION}]
    if image is not None:
        content.append({"type": "image_url", "image_url": {"url": data_url(image)}})
    messages: Any = [{"role": "user", "content": content}]
    return gpt.chat.completions.create(
        model="x", messages=messages, max_tokens=max_tokens, extra_body={"temperature": 0, "speculation": "off"}
    )


def test_an_image_part_is_seen_by_the_vision_model(gpt: openai.OpenAI) -> None:
    first, other, again = _chat(gpt, png(1)), _chat(gpt, png(2)), _chat(gpt, png(1))
    assert first.choices[0].message.content
    assert other.choices[0].message.content != first.choices[0].message.content  # another picture
    assert again.choices[0].message.content == first.choices[0].message.content
    text_only = _chat(gpt, None)
    assert first.usage.prompt_tokens >= text_only.usage.prompt_tokens + IMAGE_TOKENS

    answer = gpt.responses.create(
        model="x",
        input=[{"role": "user", "content": [
            {"type": "input_text", "text": QUESTION}, {"type": "input_image", "image_url": data_url(png(1)),
                                                        "detail": "auto"}]}],
        max_output_tokens=8,
        extra_body={"temperature": 0, "speculation": "off"},
    )  # fmt: skip
    assert answer.usage is not None and answer.usage.input_tokens == first.usage.prompt_tokens


def test_an_anthropic_image_block_is_counted_and_seen(server: Server, gpt: openai.OpenAI) -> None:
    claude = anthropic.Anthropic(base_url=server.base, api_key="none", max_retries=0, timeout=120)
    source = {"type": "base64", "media_type": "image/png", "data": base64.b64encode(png(1)).decode()}
    messages: Any = [
        {"role": "user", "content": [{"type": "text", "text": QUESTION}, {"type": "image", "source": source}]}
    ]
    counted = claude.messages.count_tokens(model="x", messages=messages)
    reply = claude.messages.create(
        model="x", max_tokens=8, messages=messages, extra_body={"temperature": 0, "speculation": "off"}
    )
    assert reply.usage.input_tokens == counted.input_tokens == _chat(gpt, png(1)).usage.prompt_tokens
    assert reply.content[0].type == "text" and reply.content[0].text == _chat(gpt, png(1)).choices[0].message.content


def test_a_20_mb_image_fits_the_request(gpt: openai.OpenAI) -> None:
    big = png(1, pad_to=20 * 2**20 - 4096)  # the first picture, followed by padding up to the 20 MB an image may be
    assert len(data_url(big)) > 27 * 10**6
    assert _chat(gpt, big).choices[0].message.content == _chat(gpt, png(1)).choices[0].message.content


def test_a_model_without_a_projector_refuses_an_image_in_one_line(backend: EngineBackend) -> None:
    served = Server(backend)  # the factory's text-only target
    try:
        client = openai.OpenAI(base_url=served.url, api_key="none", max_retries=0, timeout=120)
        with pytest.raises(openai.BadRequestError) as caught:
            _chat(client, png(1))
    finally:
        served.stop()
    message = caught.value.body["message"]  # type: ignore[index]
    assert "cannot see images: no vision projector (mmproj)" in message and "\n" not in message
