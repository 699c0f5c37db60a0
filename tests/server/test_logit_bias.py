"""OpenAI's ``logit_bias`` through /v1/chat/completions and /v1/completions with the real openai
client: a token biased +100 is all the answer, tokens at -100 never appear (here: every token
with an "e" in it, so the text has none), speculation on and off give the same greedy text, and
a bad bias is a 400 that says what is wrong."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from desktop_app.engine import Engine
from desktop_app.server.engine_backend import EngineBackend
from tests.server.live_server import Server

ASK = [{"role": "user", "content": "Tell me about the sea."}]


@pytest.fixture(scope="module")
def client(backend: EngineBackend) -> Iterator[openai.OpenAI]:
    served = Server(backend)
    yield openai.OpenAI(base_url=served.url, api_key="none", max_retries=0, timeout=120)
    served.stop()


def _chat(client: openai.OpenAI, **kwargs: Any) -> Any:
    options: dict[str, Any] = {"model": "x", "messages": ASK, "max_tokens": 24, "temperature": 0, **kwargs}
    return client.chat.completions.create(**options)


def _token(engine: Engine, text: str) -> int:
    (token,) = engine.target.tokenize(text, add_special=False)  # type: ignore[union-attr]
    return token


def test_a_token_at_plus_100_is_the_whole_answer(client: openai.OpenAI, engine: Engine) -> None:
    sea = _token(engine, " sea")
    chat = _chat(client, max_tokens=6, logit_bias={str(sea): 100})
    assert chat.choices[0].message.content == " sea" * 6
    completion = client.completions.create(model="x", prompt="Once upon a time", max_tokens=6, temperature=0,
        logit_bias={str(sea): 100})  # fmt: skip
    assert completion.choices[0].text == " sea" * 6


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_tokens_at_minus_100_never_appear_with_speculation_on_or_off(
    client: openai.OpenAI, engine: Engine, temperature: float
) -> None:
    target = engine.target
    assert target is not None
    with_e = {str(t): -100 for t in range(target.n_vocab) if b"e" in target.piece(t).lower()}
    free = _chat(client, temperature=temperature, seed=3).choices[0].message.content
    assert "e" in free.lower()  # left alone, this model writes e's
    texts = [
        _chat(client, logit_bias=with_e, temperature=temperature, seed=3, extra_body={"speculation": spec})
        .choices[0]
        .message.content
        for spec in ("off", "on")
    ]
    assert all(text and "e" not in text.lower() for text in texts), texts
    if temperature == 0.0:
        assert texts[0] == texts[1]  # greedy: drafts change nothing


@pytest.mark.parametrize(
    ("bias", "says"),
    [
        ({"5": 101}, "logit_bias must be between -100.0 and 100.0, not 101 (token 5)"),
        ({"5": "up"}, "logit_bias must be a number"),
        ({"-1": 5}, "keys must be token ids"),
        ({"five": 5}, "keys must be token ids"),
        ({"99999999": 5}, "token id 99999999, which is not in this model's vocabulary"),
    ],
)
def test_a_bad_bias_is_a_400_that_says_why(client: openai.OpenAI, bias: dict[str, Any], says: str) -> None:
    for call in (
        lambda: _chat(client, logit_bias=bias),
        lambda: client.completions.create(model="x", prompt="Hi", max_tokens=2, logit_bias=bias),
    ):
        with pytest.raises(openai.BadRequestError) as caught:
            call()
        assert says in str(caught.value)
