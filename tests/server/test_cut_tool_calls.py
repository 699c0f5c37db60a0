"""A forced tool call cut by the token limit, at points all through its text, on every endpoint,
whole and streamed, through the real SDKs: the answer says it was cut (``length``,
``max_tokens``, ``incomplete``), no unfinished call comes back as a call (streamed, not even its
name), and no call markup (``<tool_call>``, ``</tool``) comes back as text. A call whose JSON is
complete but whose closing tag was cut is kept. Streamed and whole answers agree.

Before: streamed, the cut call came as a ``tool_calls`` delta with empty arguments, then the raw
``<tool_call>`` text, with ``finish_reason: "tool_calls"``; on /v1/messages a ``"</tool"`` text
block came before the ``tool_use`` block."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from tests.server.conftest import serving
from tests.server.live_server import Server

PARAMETERS = {
    "type": "object",
    "properties": {"city": {"type": "string", "enum": ["Paris", "Tokyo"]}},
    "required": ["city"],
}
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": PARAMETERS}}
ASK = "What is the weather in Paris?"
UNCUT = 80  # tokens: room for the whole call


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.tools) as served:
        yield served


@pytest.fixture(scope="module")
def client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=60)


@pytest.fixture(scope="module")
def full(client: openai.OpenAI) -> tuple[int, str]:
    """The uncut call: its length in tokens (the end of the answer not counted) and its arguments."""
    whole = _chat(client, UNCUT)
    assert whole.choices[0].finish_reason == "tool_calls"
    (call,) = whole.choices[0].message.tool_calls
    return whole.usage.completion_tokens, call.function.arguments


def cut_points(length: int) -> list[int]:
    """Cuts in the opening tag, in the JSON, in the closing tag (every token of the call's end),
    and after the whole call (``length`` tokens is still a cut: the answer's end is one more)."""
    return sorted({*range(1, 5), length // 2, *range(length - 8, length + 1)})


def _chat(client: openai.OpenAI, max_tokens: int, **extra: Any) -> Any:
    return client.chat.completions.create(
        model="x", messages=[{"role": "user", "content": ASK}], max_tokens=max_tokens, temperature=0,
        tools=[WEATHER], tool_choice="required", parallel_tool_calls=False, **extra,
    )  # fmt: skip


def test_chat_cut_at_each_point(client: openai.OpenAI, full: tuple[int, str]) -> None:
    length, arguments = full
    kept = 0
    for max_tokens in cut_points(length):
        whole = _chat(client, max_tokens)
        choice = whole.choices[0]
        assert choice.finish_reason == "length", max_tokens
        assert not choice.message.content, (max_tokens, choice.message.content)  # no markup as text
        calls = choice.message.tool_calls or []
        assert all(json.loads(c.function.arguments) == json.loads(arguments) for c in calls)
        chunks = [c for c in _chat(client, max_tokens, stream=True) if c.choices]
        assert "".join(c.choices[0].delta.content or "" for c in chunks) == "", max_tokens
        pieces = [p for c in chunks for p in (c.choices[0].delta.tool_calls or [])]
        names = [p.function.name for p in pieces if p.function and p.function.name]
        assert names == [c.function.name for c in calls], max_tokens  # an unfinished call is not even named
        if calls:
            assert json.loads("".join(p.function.arguments or "" for p in pieces)) == json.loads(arguments)
        assert chunks[-1].choices[0].finish_reason == "length"
        kept += bool(calls)
    assert 0 < kept < len(cut_points(length))  # cut in the closing tag: the call is whole; earlier: no call


def test_messages_cut_at_each_point(server: Server, full: tuple[int, str]) -> None:
    length, arguments = full
    claude = anthropic.Anthropic(base_url=server.base, api_key="none", max_retries=0, timeout=60)
    for max_tokens in [*cut_points(length), UNCUT]:
        ask: dict[str, Any] = {
            "model": "x", "max_tokens": max_tokens, "messages": [{"role": "user", "content": ASK}],
            "tools": [{"name": "get_weather", "description": "Weather", "input_schema": PARAMETERS}],
            "tool_choice": {"type": "any", "disable_parallel_tool_use": True}, "extra_body": {"temperature": 0},
        }  # fmt: skip
        whole = claude.messages.create(**ask)
        with claude.messages.stream(**ask) as stream:
            deltas = [e.delta.text for e in stream if e.type == "content_block_delta" and e.delta.type == "text_delta"]
            streamed = stream.get_final_message()
        cut = max_tokens <= length
        for message in (whole, streamed):
            assert message.stop_reason == ("max_tokens" if cut else "tool_use"), max_tokens
            texts = [b.text for b in message.content if b.type == "text"]
            assert texts in ([], [""]), (max_tokens, texts)  # no "</tool" block
            inputs = [b.input for b in message.content if b.type == "tool_use"]
            assert inputs in ([], [json.loads(arguments)]), max_tokens
        assert "".join(deltas) == ""
        assert [b.type for b in streamed.content] == [b.type for b in whole.content]


def test_responses_cut_at_each_point(client: openai.OpenAI, full: tuple[int, str]) -> None:
    length, arguments = full
    tool = {"type": "function", "name": "get_weather", "description": "Weather", "parameters": PARAMETERS}
    for max_tokens in [*cut_points(length), UNCUT]:
        ask: dict[str, Any] = {
            "model": "x", "input": ASK, "max_output_tokens": max_tokens, "temperature": 0, "tools": [tool],
            "tool_choice": "required", "parallel_tool_calls": False,
        }  # fmt: skip
        whole = client.responses.create(**ask)
        with client.responses.stream(**ask) as stream:
            events = list(stream)
        streamed = events[-1].response  # type: ignore[union-attr]
        cut = max_tokens <= length
        assert events[-1].type == ("response.incomplete" if cut else "response.completed"), max_tokens
        for response in (whole, streamed):
            assert response.status == ("incomplete" if cut else "completed"), max_tokens
            if cut:
                assert response.incomplete_details is not None
                assert response.incomplete_details.reason == "max_output_tokens"
            assert response.output_text == "", (max_tokens, response.output_text)
            calls = [item for item in response.output if item.type == "function_call"]
            assert all(json.loads(c.arguments) == json.loads(arguments) for c in calls)  # type: ignore[union-attr]
        assert [i.type for i in streamed.output] == [i.type for i in whole.output]
