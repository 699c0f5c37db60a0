"""Tools over Anthropic's /v1/messages with the real anthropic SDK: a forced call (``tool_choice``
any / a named tool) streams as a ``tool_use`` block with ``input_json_delta`` pieces, comes back
whole the same, and its ``tool_result`` fed back gets an answer. The factory model with Qwen
2.5's template."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from tests.server.conftest import serving
from tests.server.live_server import Server

WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string", "enum": ["Paris", "Tokyo"]}},
        "required": ["city"],
    },
}
ASK = [{"role": "user", "content": "Weather in Paris?"}]
GREEDY = {"temperature": 0}  # the 2026 SDK sends no temperature of its own


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.tools) as served:
        yield served


@pytest.fixture()
def client(server: Server) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.base, api_key="none", max_retries=0, timeout=120)


def test_a_streamed_tool_use_turn_and_its_result(client: anthropic.Anthropic) -> None:
    choice = {"type": "any", "disable_parallel_tool_use": True}
    with client.messages.stream(
        model="x", max_tokens=60, messages=ASK, tools=[WEATHER], tool_choice=choice, extra_body=GREEDY
    ) as stream:  # type: ignore[arg-type]
        kinds = [getattr(event.delta, "type", "") for event in stream if event.type == "content_block_delta"]
        streamed = stream.get_final_message()
    assert "input_json_delta" in kinds
    assert streamed.stop_reason == "tool_use"
    (use,) = [b for b in streamed.content if b.type == "tool_use"]
    assert use.name == "get_weather" and use.input["city"] in ("Paris", "Tokyo")  # type: ignore[index]
    whole = client.messages.create(
        model="x", max_tokens=60, messages=ASK, tools=[WEATHER], extra_body=GREEDY,
        tool_choice={"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True},
    )  # type: ignore[arg-type]  # fmt: skip
    assert [(b.name, b.input) for b in whole.content if b.type == "tool_use"] == [(use.name, use.input)]
    history = [
        *ASK,
        {"role": "assistant", "content": [b.model_dump() for b in streamed.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "Sunny"}]},
    ]
    final = client.messages.create(model="x", max_tokens=12, messages=history, tools=[WEATHER], extra_body=GREEDY)  # type: ignore[arg-type]
    assert final.stop_reason in ("end_turn", "max_tokens")
    assert final.content[0].type == "text" and final.content[0].text
    assert final.usage.input_tokens > whole.usage.input_tokens  # the call and its result are in the prompt
