"""Tools on a model whose chat template has none (the built-in SmolLM2-135M): llama.cpp's generic
JSON format. The tools are described in the system turn, a forced call (``required``, a named
function, Anthropic's ``any``) is written by a grammar as ``{"tool_call": ...}`` and comes back as
each endpoint's call, whole and streamed, with arguments that fit the schema; under ``auto`` a
model that writes text answers text; a call and its result fed back make a prompt the template
renders. The real openai and anthropic SDKs against the real server; a model whose template has
tools keeps its own syntax."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import jsonschema
import openai
import pytest

from desktop_app.engine import Engine
from desktop_app.engine.tool_calls import GENERIC, HERMES
from tests.server.conftest import serving
from tests.server.live_server import Server

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    "required": ["city", "unit"],
}
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city",
    "parameters": SCHEMA}}  # fmt: skip
CLOCK = {"type": "function", "function": {"name": "get_time", "description": "The time in a time zone",
    "parameters": {"type": "object", "properties": {"zone": {"type": "string", "enum": ["UTC", "CET"]}},
    "required": ["zone"]}}}  # fmt: skip
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]
GREEDY = {"temperature": 0, "seed": 1}


@pytest.fixture(scope="module")
def server(default_model: Path) -> Iterator[Server]:
    with serving(default_model) as served:
        yield served


@pytest.fixture()
def client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)


def _ask(client: openai.OpenAI, **kwargs: Any) -> Any:
    args: dict[str, Any] = {"model": "x", "messages": ASK, "max_tokens": 80, **GREEDY, **kwargs}
    return client.chat.completions.create(**args)


def test_required_returns_a_call_whose_arguments_fit_the_schema(client: openai.OpenAI) -> None:
    reply = _ask(client, tools=[WEATHER], tool_choice="required")
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls" and not choice.message.content
    (call,) = choice.message.tool_calls
    assert call.id and call.function.name == "get_weather"
    jsonschema.validate(json.loads(call.function.arguments), SCHEMA)


def test_a_streamed_call_comes_once_its_json_is_complete(client: openai.OpenAI) -> None:
    whole = _ask(client, tools=[WEATHER], tool_choice="required")
    chunks = [c for c in _ask(client, tools=[WEATHER], tool_choice="required", stream=True) if c.choices]
    pieces = [tc for c in chunks for tc in (c.choices[0].delta.tool_calls or [])]
    assert pieces[0].id and pieces[0].function.name == "get_weather" and pieces[0].function.arguments == ""
    arguments = "".join(p.function.arguments or "" for p in pieces)
    assert json.loads(arguments) == json.loads(whole.choices[0].message.tool_calls[0].function.arguments)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == ""  # no JSON leaks as text
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_a_named_function_is_the_one_called(client: openai.OpenAI) -> None:
    named = {"type": "function", "function": {"name": "get_time"}}
    (call,) = _ask(client, tools=[WEATHER, CLOCK], tool_choice=named).choices[0].message.tool_calls
    assert call.function.name == "get_time" and json.loads(call.function.arguments)["zone"] in ("UTC", "CET")


def test_auto_answers_text_when_the_model_writes_text(client: openai.OpenAI) -> None:
    hello = [{"role": "user", "content": "Say hello to me."}]
    reply = _ask(client, messages=hello, tools=[WEATHER], max_tokens=30)
    assert reply.choices[0].message.content and not reply.choices[0].message.tool_calls
    assert reply.choices[0].finish_reason in ("stop", "length")
    chunks = [c for c in _ask(client, messages=hello, tools=[WEATHER], max_tokens=30, stream=True) if c.choices]
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == reply.choices[0].message.content


def test_the_tools_are_described_in_the_prompt(client: openai.OpenAI) -> None:
    plain = _ask(client, tools=[WEATHER], tool_choice="none", max_tokens=1).usage.prompt_tokens
    offered = _ask(client, tools=[WEATHER], max_tokens=1).usage.prompt_tokens
    assert offered > plain + 60  # the schema and how to call, in the system turn


def test_a_call_and_its_result_fed_back_get_an_answer(client: openai.OpenAI) -> None:
    reply = _ask(client, tools=[WEATHER], tool_choice="required")
    call = reply.choices[0].message.tool_calls[0]
    history = [
        *ASK,
        {"role": "assistant", "content": None, "tool_calls": [call.model_dump(exclude_none=True)]},
        {"role": "tool", "tool_call_id": call.id, "content": "Sunny, 24 degrees"},
    ]
    final = _ask(client, messages=history, tools=[WEATHER], max_tokens=20)
    assert final.choices[0].finish_reason in ("stop", "length", "tool_calls")
    assert final.usage.prompt_tokens > reply.usage.prompt_tokens + 10  # the call and its result are in the prompt


def test_anthropic_any_returns_a_tool_use_block(server: Server) -> None:
    client = anthropic.Anthropic(base_url=server.base, api_key="none", max_retries=0, timeout=120)
    tool = {"name": "get_weather", "description": "The weather in a city", "input_schema": SCHEMA}
    reply = client.messages.create(
        model="x",
        max_tokens=80,
        messages=ASK,
        tools=[tool],
        tool_choice={"type": "any"},
        extra_body=GREEDY,
    )
    assert reply.stop_reason == "tool_use"
    (use,) = [b for b in reply.content if b.type == "tool_use"]
    assert use.name == "get_weather"
    jsonschema.validate(use.input, SCHEMA)


def test_responses_required_returns_a_function_call(client: openai.OpenAI) -> None:
    tool = {"type": "function", "name": "get_weather", "description": "The weather in a city", "parameters": SCHEMA}
    reply = client.responses.create(
        model="x",
        input="What is the weather in Paris?",
        tools=[tool],
        tool_choice="required",
        max_output_tokens=80,
        temperature=0,
    )
    (call,) = [item for item in reply.output if item.type == "function_call"]
    assert call.name == "get_weather"
    jsonschema.validate(json.loads(call.arguments), SCHEMA)


def test_a_template_with_tools_keeps_its_own_syntax_one_without_gets_the_generic(
    models: Any, default_model: Path
) -> None:
    engine = Engine()
    try:
        for path, fmt in ((models.tools, HERMES), (models.target, GENERIC), (default_model, GENERIC)):
            assert engine.load_target(path).tool_format == fmt, path
    finally:
        engine.close()


def test_a_random_model_without_tools_in_its_template_still_calls(models: Any) -> None:
    with serving(models.target) as plain:
        client = openai.OpenAI(base_url=plain.url, api_key="none", max_retries=0, timeout=120)
        (call,) = _ask(client, tools=[CLOCK], tool_choice="required").choices[0].message.tool_calls
        assert call.function.name == "get_time" and json.loads(call.function.arguments)["zone"] in ("UTC", "CET")
