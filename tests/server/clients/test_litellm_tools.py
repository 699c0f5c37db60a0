"""litellm's ``completion(model="openai/<id>", api_base=...)`` against a real server on the factory
model with Qwen 2.5's tool template: a forced tool call, its result and a final answer; auto and
none (the tools rendered or not); under auto a call that a ``logit_bias`` on ``<tool_call>`` starts; ``response_format`` from a pydantic model and from a JSON schema
validates; streamed text and a streamed call are the whole ones."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any, Literal

import jsonschema
import pytest
from pydantic import BaseModel, Field

from tests.model_factory import TOOL_CALL_TOKENS
from tests.server.conftest import serving
from tests.server.live_server import Server

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download of the price list at import
import litellm  # noqa: E402

litellm.suppress_debug_info = True

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "enum": ["Paris", "Tokyo"]}},
            "required": ["city"],
        },
    },
}
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]
PET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 8}, "legs": {"enum": [2, 4]}},
    "required": ["name", "legs"],
    "additionalProperties": False,
}


class Pet(BaseModel):
    name: str = Field(max_length=8)
    kind: Literal["cat", "dog"]


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.tools) as served:
        yield served


def _complete(server: Server, **kwargs: Any) -> Any:
    options: dict[str, Any] = {"messages": ASK, "max_tokens": 60, "temperature": 0, **kwargs}
    return litellm.completion(model="openai/specchat", api_base=server.url, api_key="none", timeout=120, **options)


@pytest.mark.parametrize("choice", ["required", {"type": "function", "function": {"name": "get_weather"}}])
def test_a_forced_call_its_result_and_a_final_answer(server: Server, choice: Any) -> None:
    asked = _complete(server, tools=[WEATHER], tool_choice=choice, parallel_tool_calls=False)
    assert asked.choices[0].finish_reason == "tool_calls"
    (call,) = asked.choices[0].message.tool_calls
    assert call.function.name == "get_weather" and json.loads(call.function.arguments)["city"] in ("Paris", "Tokyo")
    result = {"role": "tool", "tool_call_id": call.id, "content": "Sunny, 21 C"}
    final = _complete(server, messages=[*ASK, asked.choices[0].message.model_dump(), result], tools=[WEATHER])
    assert final.choices[0].message.content and not final.choices[0].message.tool_calls
    assert final.usage.prompt_tokens > asked.usage.prompt_tokens  # the call and its result are in the prompt


def test_an_auto_call_started_by_a_logit_bias_parses_and_gets_a_final_answer(models: Any) -> None:
    with serving(models.tool_tokens) as server:  # the tools model with "<tool_call>" as one token
        bias = {str(TOOL_CALL_TOKENS[0]): 100}  # "<tool_call>": the lazy grammar writes the rest
        asked = _complete(server, tools=[WEATHER], tool_choice="auto", parallel_tool_calls=False, logit_bias=bias)
        assert asked.choices[0].finish_reason == "tool_calls" and not asked.choices[0].message.content
        (call,) = asked.choices[0].message.tool_calls
        jsonschema.validate(json.loads(call.function.arguments), WEATHER["function"]["parameters"])  # type: ignore[index]
        result = {"role": "tool", "tool_call_id": call.id, "content": "Sunny, 21 C"}
        history = [*ASK, asked.choices[0].message.model_dump(), result]
        final = _complete(server, messages=history, tools=[WEATHER], tool_choice="auto", max_tokens=12)
        assert final.choices[0].message.content and not final.choices[0].message.tool_calls


def test_auto_renders_the_tools_and_none_does_not(server: Server) -> None:
    plain = _complete(server, max_tokens=1)
    auto = _complete(server, max_tokens=1, tools=[WEATHER], tool_choice="auto")
    none = _complete(server, max_tokens=8, tools=[WEATHER], tool_choice="none")
    assert auto.usage.prompt_tokens > plain.usage.prompt_tokens + 60
    assert none.usage.prompt_tokens == plain.usage.prompt_tokens
    assert none.choices[0].message.content and not none.choices[0].message.tool_calls


def test_response_format_from_a_pydantic_model_validates(server: Server) -> None:
    answer = _complete(server, messages=[{"role": "user", "content": "A pet?"}], response_format=Pet)
    pet = Pet.model_validate_json(answer.choices[0].message.content)
    assert pet.kind in ("cat", "dog")


def test_response_format_from_a_json_schema_validates(server: Server) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "pet", "schema": PET_SCHEMA, "strict": True}}
    answer = _complete(server, messages=[{"role": "user", "content": "A pet?"}], response_format=fmt)
    jsonschema.validate(json.loads(answer.choices[0].message.content), PET_SCHEMA)


def test_streamed_text_and_a_streamed_call_are_the_whole_ones(server: Server) -> None:
    whole = _complete(server, max_tokens=12)
    pieces = list(_complete(server, max_tokens=12, stream=True))
    assert len(pieces) > 2  # it came in pieces
    assert "".join(p.choices[0].delta.content or "" for p in pieces) == whole.choices[0].message.content
    forced: dict[str, Any] = {"tools": [WEATHER], "tool_choice": "required", "parallel_tool_calls": False}
    called = _complete(server, **forced).choices[0].message.tool_calls
    streamed = litellm.stream_chunk_builder(list(_complete(server, stream=True, **forced)))
    assert streamed is not None
    assert [(c.function.name, c.function.arguments) for c in streamed.choices[0].message.tool_calls] == [
        (c.function.name, c.function.arguments) for c in called
    ]
