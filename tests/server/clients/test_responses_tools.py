"""Function tools over /v1/responses: an openai-agents agent with one tool completes with its real
Runner (the call forced by ``tool_choice="required"``, the tool run by the agent), and with the
openai client a call comes back as a ``function_call`` item, whole and streamed, and its
``function_call_output`` fed back gets an answer. The factory model with Qwen 2.5's template."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any, Literal

import openai
import pytest

from tests.server.conftest import serving
from tests.server.live_server import Server

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string", "enum": ["Paris", "Tokyo"]}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.tools) as served:
        yield served


@pytest.fixture()
def client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)


def test_an_openai_agents_agent_with_one_tool_completes(server: Server) -> None:
    from agents import Agent, ModelSettings, OpenAIResponsesModel, RunConfig, Runner, function_tool

    ran: list[str] = []

    @function_tool
    def get_weather(city: Literal["Paris", "Tokyo"]) -> str:  # an enum: a random model's call ends
        """The weather in a city."""
        ran.append(city)
        return f"Sunny in {city}"

    model = OpenAIResponsesModel("specchat", openai.AsyncOpenAI(base_url=server.url, api_key="none", max_retries=0))
    agent = Agent(
        name="weather",
        instructions="Answer with the weather tool.",
        model=model,
        tools=[get_weather],
        model_settings=ModelSettings(tool_choice="required", max_tokens=60, temperature=0),
        tool_use_behavior="stop_on_first_tool",
    )
    result = Runner.run_sync(agent, "What is the weather in Paris?", run_config=RunConfig(tracing_disabled=True))
    assert len(ran) == 1  # the model's call reached the agent's tool, with a city string
    assert result.final_output == f"Sunny in {ran[0]}"


def test_a_call_is_a_function_call_item_and_its_output_gets_an_answer(client: openai.OpenAI) -> None:
    ask = [{"role": "user", "content": "Weather in Tokyo?"}]
    reply = client.responses.create(
        model="x",
        input=ask,
        tools=[WEATHER],
        tool_choice="required",
        parallel_tool_calls=False,
        max_output_tokens=60,
        temperature=0,
    )  # type: ignore[arg-type]
    (call,) = [item for item in reply.output if item.type == "function_call"]
    assert call.name == "get_weather" and call.call_id
    assert json.loads(call.arguments)["city"] in ("Paris", "Tokyo")
    streamed = client.responses.create(
        model="x",
        input=ask,
        tools=[WEATHER],
        tool_choice="required",
        parallel_tool_calls=False,
        max_output_tokens=60,
        temperature=0,
        stream=True,
    )  # type: ignore[arg-type]
    events = list(streamed)
    done = [e.item for e in events if e.type == "response.output_item.done" and e.item.type == "function_call"]
    assert [(c.name, c.arguments) for c in done] == [(call.name, call.arguments)]
    assert not [e for e in events if e.type == "response.output_text.delta" and "<tool_call>" in e.delta]
    history = [*ask, call.model_dump(), {"type": "function_call_output", "call_id": call.call_id, "output": "Rain"}]
    final = client.responses.create(model="x", input=history, tools=[WEATHER], max_output_tokens=12, temperature=0)  # type: ignore[arg-type]
    assert final.output_text and not [i for i in final.output if i.type == "function_call"]
    assert final.usage.input_tokens > reply.usage.input_tokens  # the call and its output are in the prompt
