"""A thinking model through the OpenAI endpoint: its reasoning comes apart from its answer as
``reasoning_content`` (whole and streamed, the same parser as the window's), and the Think switch
is reachable as llama-server's ``chat_template_kwargs.enable_thinking`` or OpenAI's
``reasoning_effort``. Real server, real engine, the factory's thinking model, the openai client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.server.conftest import serving
from tests.server.live_server import Server

ASK = [{"role": "user", "content": "Is 7 a prime number?"}]


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.thinking) as served:
        yield served


@pytest.fixture()
def client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)


def _reasoning(obj: Any) -> str:
    return str((obj.model_extra or {}).get("reasoning_content") or "")


def test_reasoning_is_apart_from_the_answer_whole_and_streamed(client: openai.OpenAI) -> None:
    whole = client.chat.completions.create(model="x", messages=ASK, max_tokens=24, temperature=0)  # type: ignore[arg-type]
    message = whole.choices[0].message
    # The template opened "<think>" and this tiny model never closes it: all of it is reasoning.
    assert _reasoning(message) and "<think>" not in _reasoning(message)
    assert message.content == ""
    stream = client.chat.completions.create(model="x", messages=ASK, max_tokens=24, temperature=0, stream=True)  # type: ignore[arg-type]
    deltas = [c.choices[0].delta for c in stream if c.choices]
    assert "".join(_reasoning(d) for d in deltas) == _reasoning(message)
    assert "".join(d.content or "" for d in deltas) == ""


@pytest.mark.parametrize(
    "switch_off",
    [{"chat_template_kwargs": {"enable_thinking": False}}, {"reasoning_effort": "none"}],
)
def test_the_think_switch_is_reachable_from_the_api(client: openai.OpenAI, switch_off: dict[str, Any]) -> None:
    reply = client.chat.completions.create(
        model="x",
        messages=ASK,  # type: ignore[arg-type]
        max_tokens=12,
        temperature=0,
        extra_body=switch_off,
    )
    message = reply.choices[0].message
    assert _reasoning(message) == "" and message.content
    assert "<think>" not in (message.content or "")


def test_a_bad_switch_value_is_named(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model="x",
            messages=ASK,  # type: ignore[arg-type]
            max_tokens=4,
            extra_body={"chat_template_kwargs": {"enable_thinking": "yes"}},
        )
    assert "enable_thinking" in str(caught.value)
