"""System messages wherever a client puts them (Claude Code sends one as ``messages[1]``; OpenAI
and the Responses API allow them anywhere) are accepted on every chat endpoint and read as one
system turn: the request's own ``system``/``instructions`` first, then each system message in
order, joined by a blank line. The real SDKs against the real server: the prompt (its token
count) and the greedy answer are those of the same texts sent as one system prompt."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from desktop_app.server.engine_backend import EngineBackend
from tests.server.live_server import Server

FIRST = "You answer in one short sentence."
LATER = "Answer in French."
JOINED = f"{FIRST}\n\n{LATER}"
QUESTION = "What is the capital of France?"


@pytest.fixture(scope="module")
def server(backend: EngineBackend) -> Iterator[Server]:
    served = Server(backend)
    yield served
    served.stop()


@pytest.fixture()
def claude(server: Server) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.base, api_key="none", max_retries=0, timeout=120)


@pytest.fixture()
def client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)


def test_a_system_turn_among_the_messages_joins_the_system_prompt_on_messages(claude: anthropic.Anthropic) -> None:
    later: Any = {"role": "system", "content": [{"type": "text", "text": LATER}]}  # not in the SDK's types
    asked: dict[str, Any] = {"model": "x", "system": FIRST, "messages": [{"role": "user", "content": QUESTION}, later]}
    joined: dict[str, Any] = {"model": "x", "system": JOINED, "messages": [{"role": "user", "content": QUESTION}]}
    answer = claude.messages.create(max_tokens=12, extra_body={"temperature": 0}, **asked)
    same = claude.messages.create(max_tokens=12, extra_body={"temperature": 0}, **joined)
    assert answer.usage.input_tokens == same.usage.input_tokens
    assert answer.content == same.content
    assert claude.messages.count_tokens(**asked).input_tokens == same.usage.input_tokens


def test_system_messages_anywhere_are_one_system_turn_on_chat_completions(client: openai.OpenAI) -> None:
    def ask(messages: list[Any]) -> Any:
        return client.chat.completions.create(model="x", messages=messages, max_tokens=12, temperature=0)

    spread = ask(
        [
            {"role": "system", "content": FIRST},
            {"role": "user", "content": QUESTION},
            {"role": "developer", "content": LATER},
        ]
    )
    joined = ask([{"role": "system", "content": JOINED}, {"role": "user", "content": QUESTION}])
    assert spread.usage is not None and joined.usage is not None
    assert spread.usage.prompt_tokens == joined.usage.prompt_tokens
    assert spread.choices[0].message.content == joined.choices[0].message.content


def test_system_and_developer_items_join_the_instructions_on_responses(client: openai.OpenAI) -> None:
    spread = client.responses.create(
        model="x",
        instructions=FIRST,
        input=[{"role": "user", "content": QUESTION}, {"role": "developer", "content": LATER}],
        max_output_tokens=12,
        temperature=0,
    )
    joined = client.responses.create(
        model="x",
        instructions=JOINED,
        input=[{"role": "user", "content": QUESTION}],
        max_output_tokens=12,
        temperature=0,
    )
    assert spread.usage is not None and joined.usage is not None
    assert spread.usage.input_tokens == joined.usage.input_tokens
    assert spread.output_text == joined.output_text


def test_earlier_reasoning_items_are_accepted_and_add_nothing(client: openai.OpenAI) -> None:
    """Codex sends its earlier reasoning back as ``reasoning`` items."""
    question: Any = {"role": "user", "content": QUESTION}
    reasoning: Any = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"}
    answered: Any = {"role": "assistant", "content": [{"type": "output_text", "text": "Paris."}]}
    again: Any = {"role": "user", "content": "And of Italy?"}
    with_reasoning = client.responses.create(
        model="x", input=[question, reasoning, answered, again], max_output_tokens=4, temperature=0
    )
    without = client.responses.create(model="x", input=[question, answered, again], max_output_tokens=4, temperature=0)
    assert with_reasoning.usage is not None and without.usage is not None
    assert with_reasoning.usage.input_tokens == without.usage.input_tokens
