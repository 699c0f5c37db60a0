"""Anthropic's ``/v1/messages`` driven by the official ``anthropic`` SDK against the real server and
engine: the same greedy text as the OpenAI endpoint for the same conversation, streamed and not,
system prompts, stop sequences, usage, the key in ``x-api-key``, and Anthropic's error shape."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import httpx2 as httpx
import openai
import pytest

from desktop_app.server.engine_backend import EngineBackend
from tests.server.live_server import Server

KEY = "anthropic-key"
SYSTEM = "You answer in one short sentence."
QUESTION = "What is the capital of France?"


@pytest.fixture(scope="module")
def server(backend: EngineBackend) -> Iterator[Server]:
    served = Server(backend, KEY)
    yield served
    served.stop()


@pytest.fixture()
def claude(server: Server) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.url.removesuffix("/v1"), api_key=KEY, max_retries=0, timeout=120)


def _openai_text(server: Server, max_tokens: int) -> str:
    client = openai.OpenAI(base_url=server.url, api_key=KEY, max_retries=0, timeout=120)
    reply = client.chat.completions.create(
        model="x",
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}],
        max_tokens=max_tokens,
        extra_body={"temperature": 0},  # the 2026 SDK has no sampling arguments of its own
    )
    return reply.choices[0].message.content or ""


def test_a_message_is_the_same_greedy_answer_as_the_openai_endpoint(
    claude: anthropic.Anthropic, server: Server
) -> None:
    message = claude.messages.create(
        model="any",
        system=SYSTEM,
        messages=[{"role": "user", "content": QUESTION}],
        max_tokens=24,
        extra_body={"temperature": 0},
    )
    assert message.type == "message" and message.role == "assistant"
    assert message.content[0].type == "text"
    assert message.content[0].text == _openai_text(server, 24)
    assert message.usage.output_tokens > 0 and message.usage.input_tokens > 10
    assert message.stop_reason in ("end_turn", "max_tokens")


def test_streamed_events_add_up_to_the_same_text(claude: anthropic.Anthropic, server: Server) -> None:
    with claude.messages.stream(
        model="any",
        system=[{"type": "text", "text": SYSTEM}],
        messages=[{"role": "user", "content": [{"type": "text", "text": QUESTION}]}],
        max_tokens=24,
        extra_body={"temperature": 0},
    ) as stream:
        deltas = [e.delta.text for e in stream if e.type == "content_block_delta" and e.delta.type == "text_delta"]
        final = stream.get_final_message()
    assert len(deltas) >= 1
    assert "".join(deltas) == final.content[0].text == _openai_text(server, 24)
    assert final.usage.output_tokens > 0


def test_a_stop_sequence_is_reported_as_anthropic_does(claude: anthropic.Anthropic, server: Server) -> None:
    full = _openai_text(server, 24)
    word = full.split()[2]  # a word from inside the answer
    message = claude.messages.create(
        model="any",
        system=SYSTEM,
        messages=[{"role": "user", "content": QUESTION}],
        max_tokens=24,
        extra_body={"temperature": 0},
        stop_sequences=[word],
    )
    assert message.stop_reason == "stop_sequence" and message.stop_sequence == word
    assert word not in message.content[0].text and full.startswith(message.content[0].text)


def test_errors_have_anthropics_shape(server: Server) -> None:
    base = server.url.removesuffix("/v1")
    no_key = httpx.post(f"{base}/v1/messages", json={}, timeout=30)
    assert no_key.status_code == 401 and no_key.json()["error"]["type"] == "authentication_error"
    headers = {"x-api-key": KEY}
    missing = httpx.post(f"{base}/v1/messages", json={"messages": [{"role": "user", "content": "hi"}]}, headers=headers)
    assert missing.status_code == 400
    assert missing.json() == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "max_tokens: Field required (an integer)"},
    }
    image = {"role": "user", "content": [{"type": "image", "source": {}}]}
    refused = httpx.post(f"{base}/v1/messages", json={"max_tokens": 4, "messages": [image]}, headers=headers)
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == (
        "messages.0.content.0: the source must be {type: base64, media_type, data}"
    )


def test_the_sdk_raises_its_own_error_type_for_a_bad_request(claude: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        claude.messages.create(
            model="any", messages=[{"role": "user", "content": "hi"}], max_tokens=4, extra_body={"temperature": 9}
        )
    assert "temperature" in str(caught.value)
