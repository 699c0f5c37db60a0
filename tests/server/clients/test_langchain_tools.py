"""LangChain's ``ChatOpenAI`` against a real server on the factory model with Qwen 2.5's tool
template: ``bind_tools`` with each ``tool_choice`` (auto and none: the tools rendered or not, and
under auto a call that ``logit_bias`` on ``<tool_call>`` starts, its ToolMessage, a final answer;
required and the named function: a call, whole and streamed, whose ``ToolMessage`` gets a final
answer) and ``with_structured_output`` by json_schema and by function calling.

LangChain sends no ``parallel_tool_calls``: under ``required`` a model that does not stop writes
call after call until ``max_tokens`` (here, at 60); the complete calls must still come back as
``tool_calls``, not as call syntax in ``content``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

from tests.model_factory import TOOL_CALL_TOKENS
from tests.server.conftest import serving
from tests.server.live_server import Server

CITIES = ("Paris", "Tokyo")
ASK: list[BaseMessage] = [HumanMessage("Weather in Paris?")]


@tool
def get_weather(city: Literal["Paris", "Tokyo"]) -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


class Pet(BaseModel):
    name: str = Field(max_length=8)  # short: a random model's string ends within max_tokens
    kind: Literal["cat", "dog"]


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.tools) as served:
        yield served


@pytest.fixture()
def chat(server: Server) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=server.url, api_key="none", model="specchat", temperature=0, max_tokens=60, max_retries=0, timeout=120
    )  # type: ignore[call-arg]


def _input_tokens(message: BaseMessage) -> int:
    assert isinstance(message, AIMessage) and message.usage_metadata is not None
    return message.usage_metadata["input_tokens"]


def test_auto_renders_the_tools_and_none_does_not(chat: ChatOpenAI) -> None:
    plain = chat.invoke(ASK, max_tokens=1)
    auto = chat.bind_tools([get_weather], tool_choice="auto").invoke(ASK, max_tokens=1)
    none = chat.bind_tools([get_weather], tool_choice="none").invoke(ASK, max_tokens=8)
    # Qwen's template writes the tools' JSON and its instructions into the system message.
    assert _input_tokens(auto) > _input_tokens(plain) + 60
    assert _input_tokens(none) == _input_tokens(plain)
    assert isinstance(none, AIMessage) and none.content and not none.tool_calls


@pytest.mark.parametrize("choice", ["required", "get_weather"])
def test_a_forced_call_runs_and_its_tool_message_gets_a_final_answer(chat: ChatOpenAI, choice: str) -> None:
    asked = chat.bind_tools([get_weather], tool_choice=choice).invoke(ASK)
    assert isinstance(asked, AIMessage)
    assert "<tool_call>" not in str(asked.content) and not asked.invalid_tool_calls
    assert asked.tool_calls and all(c["name"] == "get_weather" for c in asked.tool_calls)
    assert all(c["args"]["city"] in CITIES for c in asked.tool_calls)
    results = [get_weather.invoke(call) for call in asked.tool_calls]  # ToolMessages, as an agent makes them
    assert results[0].content == f"Sunny in {asked.tool_calls[0]['args']['city']}"
    final = chat.bind_tools([get_weather]).invoke([*ASK, asked, *results], max_tokens=12)
    assert isinstance(final, AIMessage) and final.content and not final.tool_calls
    assert _input_tokens(final) > _input_tokens(asked)  # the calls and their results are in the prompt


def test_an_auto_call_started_by_a_logit_bias_runs_and_gets_a_final_answer(models: Any) -> None:
    # The random model never calls by itself: "<tool_call>" favoured, and the lazy grammar writes the call.
    with serving(models.tool_tokens) as server:  # the tools model with "<tool_call>" as one token
        options: dict[str, Any] = {"base_url": server.url, "api_key": "none", "model": "specchat", "temperature": 0,
            "max_tokens": 60, "max_retries": 0, "timeout": 120}  # fmt: skip
        biased = ChatOpenAI(**options, logit_bias={TOOL_CALL_TOKENS[0]: 100})
        asked = biased.bind_tools([get_weather], tool_choice="auto", parallel_tool_calls=False).invoke(ASK)
        assert isinstance(asked, AIMessage) and asked.content == "" and not asked.invalid_tool_calls
        (call,) = asked.tool_calls
        assert call["name"] == "get_weather" and call["args"]["city"] in CITIES
        result = get_weather.invoke(call)  # a ToolMessage, as an agent makes it
        final = ChatOpenAI(**options).bind_tools([get_weather], tool_choice="auto").invoke([*ASK, asked, result])
        assert isinstance(final, AIMessage) and final.content and not final.tool_calls


def test_a_streamed_call_merges_into_the_whole_call(chat: ChatOpenAI) -> None:
    bound = chat.bind_tools([get_weather], tool_choice="get_weather", parallel_tool_calls=False)
    whole = bound.invoke(ASK)
    merged: AIMessageChunk | None = None
    for piece in bound.stream(ASK):
        assert isinstance(piece, AIMessageChunk)
        merged = piece if merged is None else merged + piece
    assert isinstance(whole, AIMessage) and merged is not None
    assert [(c["name"], c["args"]) for c in merged.tool_calls] == [(c["name"], c["args"]) for c in whole.tool_calls]
    assert len(whole.tool_calls) == 1 and merged.content == ""


@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_with_structured_output_returns_a_validated_object(chat: ChatOpenAI, method: str) -> None:
    structured = chat.with_structured_output(Pet, method=method, include_raw=True)  # type: ignore[arg-type]
    result = structured.invoke("A pet, please.")
    assert isinstance(result, dict) and result["parsing_error"] is None
    pet = result["parsed"]
    assert isinstance(pet, Pet) and pet.kind in ("cat", "dog") and len(pet.name) <= 8
