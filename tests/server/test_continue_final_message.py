"""``continue_final_message`` (vLLM's field) through /v1/chat/completions: the last message, an
answer cut short, goes on in its own turn; greedy, the two parts are one longer answer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from desktop_app.server.engine_backend import EngineBackend
from tests.server.live_server import Server

ASK = [{"role": "user", "content": "Tell me about the sea."}]


@pytest.fixture(scope="module")
def client(backend: EngineBackend) -> Iterator[openai.OpenAI]:
    served = Server(backend)
    yield openai.OpenAI(base_url=served.url, api_key="none", max_retries=0, timeout=120)
    served.stop()


def _chat(client: openai.OpenAI, messages: list[dict[str, str]], max_tokens: int, **extra: Any) -> str:
    chat = client.chat.completions.create(
        model="x",
        messages=messages,
        max_tokens=max_tokens,
        temperature=0,
        extra_body=extra or None,
    )
    return chat.choices[0].message.content or ""


def test_the_last_answer_goes_on_where_it_ended(client: openai.OpenAI) -> None:
    whole = _chat(client, ASK, 20)
    cut = _chat(client, ASK, 8)
    assert whole.startswith(cut) and len(whole) > len(cut)
    more = _chat(client, [*ASK, {"role": "assistant", "content": cut}], 12, continue_final_message=True)
    assert cut + more == whole


def test_it_needs_an_answer_last(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="to continue an answer"):
        _chat(client, ASK, 4, continue_final_message=True)
    with pytest.raises(openai.BadRequestError, match="continue_final_message"):
        _chat(client, [*ASK, {"role": "assistant", "content": "Hi"}], 4, continue_final_message="yes")
