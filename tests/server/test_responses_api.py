"""``/v1/responses`` through the official ``openai`` client (``client.responses``) against the real
server and engine: the same greedy text as chat completions, whole and streamed (the SDK's own
event accumulator rebuilds it), instructions as the system message, a thinking model's reasoning
as a reasoning item, and named 400s for what is not served."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.server.conftest import serving
from tests.server.live_server import Server

INSTRUCTIONS = "Answer in one short sentence."
QUESTION = "What is the capital of France?"


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.target) as served:
        yield served


@pytest.fixture(scope="module")
def thinking_server(models: Any) -> Iterator[Server]:
    with serving(models.thinking) as served:
        yield served


def _client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)


def _chat_text(server: Server, max_tokens: int) -> str:
    reply = _client(server).chat.completions.create(
        model="x",
        messages=[{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": QUESTION}],
        max_tokens=max_tokens,
        temperature=0,
    )
    return reply.choices[0].message.content or ""


def test_a_response_is_the_same_greedy_text_as_chat_completions(server: Server) -> None:
    response = _client(server).responses.create(
        model="x", instructions=INSTRUCTIONS, input=QUESTION, max_output_tokens=20, temperature=0
    )
    assert response.object == "response" and response.output[0].type == "message"
    assert response.output_text == _chat_text(server, 20)
    assert response.usage is not None and response.usage.output_tokens > 0
    assert response.status in ("completed", "incomplete")


def test_streamed_events_rebuild_the_same_response(server: Server) -> None:
    items = [{"role": "user", "content": [{"type": "input_text", "text": QUESTION}]}]
    with _client(server).responses.stream(
        model="x", instructions=INSTRUCTIONS, input=items, max_output_tokens=20, temperature=0
    ) as stream:
        events = list(stream)
    kinds = [event.type for event in events]
    # cut by max_output_tokens: OpenAI ends such a stream with response.incomplete, not completed
    assert kinds[0] == "response.created" and kinds[-1] == "response.incomplete"
    assert "response.output_text.delta" in kinds
    final = events[-1].response  # type: ignore[union-attr]
    assert final.status == "incomplete" and final.incomplete_details.reason == "max_output_tokens"
    assert final.output_text == _chat_text(server, 20)


def test_a_thinking_models_reasoning_is_its_own_item(thinking_server: Server) -> None:
    client = _client(thinking_server)
    response = client.responses.create(model="x", input=QUESTION, max_output_tokens=16, temperature=0)
    kinds = [item.type for item in response.output]
    assert kinds == ["reasoning", "message"]
    reasoning = response.output[0].content  # type: ignore[union-attr]
    assert reasoning and reasoning[0].text and "<think>" not in reasoning[0].text
    assert response.usage is not None and response.usage.output_tokens_details.reasoning_tokens == 16
    plain = client.responses.create(
        model="x", input=QUESTION, max_output_tokens=8, temperature=0, reasoning={"effort": "none"}
    )
    assert [item.type for item in plain.output] == ["message"] and plain.output_text


def test_what_is_not_served_is_named(server: Server) -> None:
    client = _client(server)
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="x", input=QUESTION, previous_response_id="resp_123")
    assert "previous_response_id" in str(caught.value)
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(
            model="x", input=[{"role": "user", "content": [{"type": "input_image", "image_url": "file:///x"}]}]
        )
    assert "input 0, part 1: 'file:///x' is not a data URL; SpecChat fetches nothing" in str(caught.value)
