"""Tool calling through /v1/chat/completions with the real openai client, on the factory model
whose template is Qwen 2.5's (Hermes-style ``<tool_call>``): the tools reach the template, a
forced call (``required`` or a named function: a grammar) comes back as ``tool_calls`` whole and
streamed, its result is fed back, and the model answers (a template without tools: test_generic_tools.py).

Under ``auto`` this random model never starts a call by itself; on the same model with Qwen's
``<tool_call>`` token (``tool_tokens``) a client's ``logit_bias`` on it makes it start one, and
from there the lazy grammar writes a call that parses and fits the schema (without it the model
writes ``<tool_call>`` and then anything)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import openai
import pytest

from tests.model_factory import TOOL_CALL_TOKENS
from tests.server.conftest import serving
from tests.server.live_server import Server

CITIES = ["Paris", "Tokyo", "Lima"]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "enum": CITIES}},
            "required": ["city"],
        },
    },
}
CLOCK = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "The time in a time zone",
        "parameters": {
            "type": "object",
            "properties": {"zone": {"type": "string", "enum": ["UTC", "CET"]}},
            "required": ["zone"],
        },
    },
}
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]
START_A_CALL = {str(TOOL_CALL_TOKENS[0]): 100}  # logit_bias: "<tool_call>" first, whatever the model thinks


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.tools) as served:
        yield served


@pytest.fixture()
def client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)


@pytest.fixture(scope="module")
def token_client(models: Any) -> Iterator[openai.OpenAI]:
    """A client of the tools model with ``<tool_call>`` as one token (``TOOL_CALL_TOKENS``)."""
    with serving(models.tool_tokens) as served:
        yield openai.OpenAI(base_url=served.url, api_key="none", max_retries=0, timeout=120)


def _ask(client: openai.OpenAI, **kwargs: Any) -> Any:
    options: dict[str, Any] = {"model": "x", "messages": ASK, "max_tokens": 60, "temperature": 0, **kwargs}
    return client.chat.completions.create(**options)


def test_the_tools_reach_the_model_s_template(client: openai.OpenAI) -> None:
    plain = _ask(client, max_tokens=1)
    offered = _ask(client, max_tokens=1, tools=[WEATHER], tool_choice="auto")
    declined = _ask(client, max_tokens=1, tools=[WEATHER], tool_choice="none")
    # Qwen's template writes the tools' JSON and its instructions into the system message.
    assert offered.usage.prompt_tokens > plain.usage.prompt_tokens + 60
    assert declined.usage.prompt_tokens == plain.usage.prompt_tokens  # "none": not offered at all


@pytest.mark.parametrize("choice", ["required", {"type": "function", "function": {"name": "get_weather"}}])
def test_a_forced_call_comes_back_and_its_result_gets_an_answer(client: openai.OpenAI, choice: Any) -> None:
    reply = _ask(client, tools=[WEATHER, CLOCK], tool_choice=choice, parallel_tool_calls=False)
    choice0 = reply.choices[0]
    assert choice0.finish_reason == "tool_calls"
    (call,) = choice0.message.tool_calls
    assert call.id and call.type == "function"
    named = choice != "required"
    assert call.function.name == "get_weather" if named else call.function.name in ("get_weather", "get_time")
    arguments = json.loads(call.function.arguments)
    assert arguments in ([{"city": c} for c in CITIES] + [{"zone": "UTC"}, {"zone": "CET"}])
    # The SDK's own message object goes back as history (model_dump: refusal, annotations... as null).
    history = [*ASK, choice0.message.model_dump(), {"role": "tool", "tool_call_id": call.id, "content": "Sunny, 21 C"}]
    final = _ask(client, messages=history, max_tokens=12, tools=[WEATHER, CLOCK])
    assert final.choices[0].finish_reason in ("stop", "length")
    assert final.choices[0].message.content and not final.choices[0].message.tool_calls
    assert final.usage.prompt_tokens > reply.usage.prompt_tokens  # the call and its result are in the prompt


def test_a_streamed_call_names_its_function_first_then_its_arguments(client: openai.OpenAI) -> None:
    whole = _ask(client, tools=[WEATHER], tool_choice="required", parallel_tool_calls=False)
    stream = _ask(client, tools=[WEATHER], tool_choice="required", parallel_tool_calls=False, stream=True)
    chunks = [c for c in stream if c.choices]
    pieces = [tc for c in chunks for tc in (c.choices[0].delta.tool_calls or [])]
    assert pieces[0].id and pieces[0].function.name == "get_weather" and pieces[0].function.arguments == ""
    assert all(p.index == 0 and p.id is None for p in pieces[1:])
    arguments = "".join(p.function.arguments or "" for p in pieces)
    assert json.loads(arguments) == json.loads(whole.choices[0].message.tool_calls[0].function.arguments)
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == ""  # no call syntax leaks as text


def test_bad_tool_requests_are_400_naming_the_field(client: openai.OpenAI) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"tools": [{"type": "function", "function": {"description": "no name"}}]}, "tools"),
        ({"tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "nope"}}}, "tool_choice"),
        ({"tools": [WEATHER], "tool_choice": "sometimes"}, "tool_choice"),
        ({"tool_choice": "required"}, "tool_choice"),
        ({"tools": [WEATHER], "parallel_tool_calls": "yes"}, "parallel_tool_calls"),
    ]
    for extra, param in cases:
        with pytest.raises(openai.BadRequestError) as caught:
            _ask(client, max_tokens=1, extra_body=extra)
        assert caught.value.param == param, extra


def test_a_forced_call_cut_by_max_tokens_keeps_its_complete_calls(client: openai.OpenAI) -> None:
    # LangChain's bind_tools(tool_choice="required") as it asks: no parallel_tool_calls, so the
    # grammar lets call follow call, and this model writes a second until max_tokens cuts it.
    weather = {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.",
        "parameters": {"properties": {"city": {"enum": ["Paris", "Tokyo"], "type": "string"}}, "required": ["city"],
        "type": "object"}}}  # fmt: skip
    ask = [{"role": "user", "content": "Weather in Paris?"}]
    whole = _ask(client, messages=ask, tools=[weather], tool_choice="required")
    assert whole.usage.completion_tokens == 60  # cut short, in the middle of a later call
    calls = whole.choices[0].message.tool_calls
    assert calls and all(json.loads(c.function.arguments)["city"] in ("Paris", "Tokyo") for c in calls)
    assert not whole.choices[0].message.content
    stream = _ask(client, messages=ask, tools=[weather], tool_choice="required", stream=True)
    chunks = [c for c in stream if c.choices]
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == ""  # no call syntax leaks as text
    pieces = [tc for c in chunks for tc in (c.choices[0].delta.tool_calls or [])]
    streamed = "".join(p.function.arguments or "" for p in pieces if p.index == 0)
    assert json.loads(streamed) == json.loads(calls[0].function.arguments)


def _valid_call(call: Any, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The call's arguments, checked against its function's schema."""
    (schema,) = [t["function"]["parameters"] for t in tools if t["function"]["name"] == call.function.name]
    assert call.type == "function" and call.id
    arguments = json.loads(call.function.arguments)
    jsonschema.validate(arguments, schema)
    return dict(arguments)


@pytest.mark.parametrize("speculation", ["off", "on"])
def test_an_auto_call_parses_whole_and_streamed_and_its_result_gets_an_answer(
    token_client: openai.OpenAI, speculation: str
) -> None:
    client = token_client
    asked = {"tools": [WEATHER, CLOCK], "tool_choice": "auto", "parallel_tool_calls": False, "logit_bias": START_A_CALL}
    extra = {"extra_body": {"speculation": speculation}}
    reply = _ask(client, **asked, **extra)
    choice0 = reply.choices[0]
    assert choice0.finish_reason == "tool_calls" and not choice0.message.content
    (call,) = choice0.message.tool_calls
    arguments = _valid_call(call, [WEATHER, CLOCK])
    stream = _ask(client, **asked, **extra, stream=True)
    chunks = [c for c in stream if c.choices]
    pieces = [tc for c in chunks for tc in (c.choices[0].delta.tool_calls or [])]
    assert pieces[0].function.name == call.function.name
    assert json.loads("".join(p.function.arguments or "" for p in pieces)) == arguments
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == ""  # no call syntax leaks as text
    # The result goes back without the bias: under auto the model answers in text.
    history = [*ASK, choice0.message.model_dump(), {"role": "tool", "tool_call_id": call.id, "content": "Sunny, 21 C"}]
    final = _ask(client, messages=history, max_tokens=12, tools=[WEATHER, CLOCK], tool_choice="auto", **extra)
    assert final.choices[0].finish_reason in ("stop", "length")
    assert final.choices[0].message.content and not final.choices[0].message.tool_calls


def test_sampled_auto_calls_all_parse_with_speculation_on(token_client: openai.OpenAI) -> None:
    # Temperature 1: the model picks its own words inside the call, which the grammar keeps a call.
    for seed in range(4):
        reply = _ask(
            token_client,
            tools=[WEATHER],
            tool_choice="auto",
            parallel_tool_calls=False,
            logit_bias=START_A_CALL,
            temperature=1.0,
            seed=seed,
            extra_body={"speculation": "on"},
        )
        assert reply.choices[0].finish_reason == "tool_calls", reply.choices[0].message.content
        _valid_call(reply.choices[0].message.tool_calls[0], [WEATHER])


def test_an_auto_answer_with_text_before_its_call_keeps_both(token_client: openai.OpenAI) -> None:
    # A smaller bias: the model writes some words, then starts a call, which the grammar finishes.
    bias = {str(TOOL_CALL_TOKENS[0]): 26}
    reply = _ask(token_client, tools=[WEATHER], tool_choice="auto", parallel_tool_calls=False, logit_bias=bias)
    message = reply.choices[0].message
    assert message.content and "<tool_call>" not in message.content
    assert reply.choices[0].finish_reason == "tool_calls"
    _valid_call(message.tool_calls[0], [WEATHER])
