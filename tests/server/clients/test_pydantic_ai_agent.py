"""pydantic-ai Agents on an ``OpenAIChatModel`` pointed at a real server (the factory model with
Qwen 2.5's tool template).

pydantic-ai's default structured output is a ``final_result`` tool beside the agent's own, asked
with ``tool_choice: "required"``: which of the two a random model calls is its own choice, so a
capability forces the weather tool on the first step and the output tool on the second (the
per-step way pydantic-ai documents; each reaches the server as a named ``tool_choice``, its
grammar). ``NativeOutput`` asks for the output as ``response_format`` json_schema instead."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field
from pydantic_ai import Agent, NativeOutput, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings

from tests.server.conftest import serving
from tests.server.live_server import Server

SETTINGS = ModelSettings(temperature=0, max_tokens=60)


class Pet(BaseModel):
    name: str = Field(max_length=8)  # short: a random model's string ends within max_tokens
    kind: Literal["cat", "dog"]


@dataclass
class WeatherThenAnswer(AbstractCapability[None]):
    """The weather tool on the first step, the output tool on the next."""

    def get_model_settings(self) -> Any:
        return lambda ctx: ModelSettings(tool_choice=["get_weather"] if ctx.run_step == 1 else ["final_result"])


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.tools) as served:
        yield served


@pytest.fixture()
def model(server: Server) -> OpenAIChatModel:
    return OpenAIChatModel("specchat", provider=OpenAIProvider(base_url=server.url, api_key="none"))


def test_an_agent_calls_its_tool_then_returns_a_validated_output(model: OpenAIChatModel) -> None:
    ran: list[str] = []
    agent = Agent(model, output_type=Pet, model_settings=SETTINGS, capabilities=[WeatherThenAnswer()])

    @agent.tool
    def get_weather(ctx: RunContext[None], city: Literal["Paris", "Tokyo"]) -> str:
        """The weather in a city."""
        ran.append(city)
        return f"Sunny in {city}"

    result = agent.run_sync("Pick a pet for the weather in Paris.")
    assert len(ran) == 1 and ran[0] in ("Paris", "Tokyo")  # the model's call reached the agent's tool
    assert isinstance(result.output, Pet) and result.output.kind in ("cat", "dog")
    messages = result.all_messages()
    responses = [m for m in messages if isinstance(m, ModelResponse)]
    called = [p.tool_name for r in responses for p in r.parts if isinstance(p, ToolCallPart)]
    assert called == ["get_weather", "final_result"]
    returned = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    assert returned[0].content == f"Sunny in {ran[0]}"
    # the tool's result went back to the server: the second request's prompt is the longer
    assert responses[1].usage.input_tokens > responses[0].usage.input_tokens


def test_a_native_output_type_is_a_validated_object(model: OpenAIChatModel) -> None:
    agent = Agent(model, output_type=NativeOutput(Pet), model_settings=SETTINGS)
    result = agent.run_sync("A pet?")
    assert isinstance(result.output, Pet) and len(result.output.name) <= 8
