"""Issue 46's hostile schemas against a real server on the factory tools model (a Hermes
template): each answer comes within 5 s, as a one-line 400 naming the part (``response_format``,
or the function) or a 200; never a 500, never a dead server. ``$ref`` in a tool's parameters and a
property with no type (Claude Code's Workflow tool) work on all three endpoints; /health answers
while a schema is converted; a refused schema costs the server no memory."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import jsonschema
import psutil
import pytest

from desktop_app.server.grammar_worker import budgeted
from desktop_app.server.schema_gbnf import schema_gbnf
from tests.server.conftest import serving
from tests.server.live_server import Server
from tests.server.test_schema_budget import HOSTILE, INTEGERS_20000, WORKFLOW

ASK = [{"role": "user", "content": "What is the weather in Paris?"}]
CITY_BY_REF = {  # pydantic's way: the enum in $defs, the property a $ref
    "$defs": {"City": {"enum": ["Paris", "Tokyo", "Lima"], "type": "string"}},
    "type": "object",
    "properties": {"city": {"$ref": "#/$defs/City"}},
    "required": ["city"],
}
BOUND_S = 5.0  # a refusal (no generation): the bound
ANSWER_S = 30.0  # an answer of a few tokens on a busy 2-core machine (it took > 60 s, or killed the server)


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.tools) as served:
        budgeted(schema_gbnf, json.dumps({"type": "integer"}))  # the worker started: the bounds time requests
        yield served


def post(server: Server, path: str, body: dict[str, Any]) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    reply = httpx.post(f"{server.base}{path}", json=body, timeout=60)
    return reply, time.monotonic() - started


def refusal(reply: httpx.Response) -> str:
    assert reply.status_code == 400, reply.text[:500]
    body = reply.json()
    message = body["error"]["message"]
    assert "\n" not in message and len(message) < 400
    return str(message)


def schema_format(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}


def tool(name: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


def alive(server: Server) -> None:
    assert httpx.get(f"{server.base}/health", timeout=10).status_code == 200


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_response_format_is_a_one_line_400_naming_it(server: Server, case: str) -> None:
    schema, names = HOSTILE[case]
    reply, took = post(server, "/v1/chat/completions", {"messages": ASK, "response_format": schema_format(schema)})
    message = refusal(reply)
    assert took < BOUND_S
    assert "nested" in message or (message.startswith("'response_format': ") and names in message)


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_tool_schema_is_refused_when_forced_and_left_unconstrained_under_auto(
    server: Server, case: str
) -> None:
    schema, names = HOSTILE[case]
    base = {"messages": ASK, "max_tokens": 4, "tools": [tool("count", schema)]}
    reply, took = post(server, "/v1/chat/completions", {**base, "tool_choice": "required"})
    message = refusal(reply)
    assert took < BOUND_S
    assert "nested" in message or ("the function 'count'" in message and names in message)
    reply, took = post(server, "/v1/chat/completions", {**base, "tool_choice": "auto"})
    assert reply.status_code == 200 or refusal(reply)  # a one-line 400 for the prompt's size (100k enum values)
    assert took < ANSWER_S


def test_twenty_thousand_items_no_longer_kill_the_server(server: Server) -> None:
    body = {"messages": ASK, "max_tokens": 12, "temperature": 0, "response_format": schema_format(INTEGERS_20000)}
    reply, took = post(server, "/v1/chat/completions", body)
    assert took < ANSWER_S
    assert reply.status_code == 200 or reply.json()["error"]["code"] == "response_format_unmet", reply.text[:500]
    forced = {"messages": ASK, "max_tokens": 12, "tools": [tool("sum", INTEGERS_20000)], "tool_choice": "required"}
    reply, took = post(server, "/v1/chat/completions", forced)
    assert reply.status_code == 200 and took < ANSWER_S, reply.text[:500]
    reply, took = post(
        server,
        "/v1/responses",
        {
            "input": "Numbers?",
            "max_output_tokens": 12,
            "text": {"format": {**schema_format(INTEGERS_20000)["json_schema"], "type": "json_schema"}},
        },
    )
    assert reply.status_code in (200, 400) and took < ANSWER_S, reply.text[:500]
    alive(server)


def test_a_tool_with_defs_and_refs_is_called_with_arguments_that_validate(server: Server) -> None:
    body = {"messages": ASK, "max_tokens": 40, "temperature": 0, "tools": [tool("weather", CITY_BY_REF)]}
    reply, _ = post(server, "/v1/chat/completions", {**body, "tool_choice": "required"})
    assert reply.status_code == 200, reply.text[:500]
    (call,) = reply.json()["choices"][0]["message"]["tool_calls"][:1]
    jsonschema.validate(json.loads(call["function"]["arguments"]), CITY_BY_REF)
    anthropic = {
        "model": "x",
        "max_tokens": 40,
        "messages": ASK,
        "tools": [{"name": "weather", "input_schema": CITY_BY_REF}],
        "tool_choice": {"type": "any"},
    }
    reply, _ = post(server, "/v1/messages", anthropic)
    assert reply.status_code == 200, reply.text[:500]
    (use,) = [b for b in reply.json()["content"] if b["type"] == "tool_use"][:1]
    jsonschema.validate(use["input"], CITY_BY_REF)
    responses = {"input": "Weather?", "max_output_tokens": 40, "tool_choice": "required"}
    reply, _ = post(
        server,
        "/v1/responses",
        {**responses, "tools": [{"type": "function", "name": "weather", "parameters": CITY_BY_REF}]},
    )
    assert reply.status_code == 200, reply.text[:500]
    (item,) = [i for i in reply.json()["output"] if i["type"] == "function_call"][:1]
    jsonschema.validate(json.loads(item["arguments"]), CITY_BY_REF)


@pytest.mark.parametrize("choice", ["auto", "required"])
def test_claude_codes_workflow_tool_is_served_not_a_500(server: Server, choice: str) -> None:
    chat = {"messages": ASK, "max_tokens": 16, "tools": [tool("Workflow", WORKFLOW)], "tool_choice": choice}
    reply, _ = post(server, "/v1/chat/completions", chat)
    assert reply.status_code == 200, reply.text[:500]
    anthropic = {
        "model": "x",
        "max_tokens": 16,
        "messages": ASK,
        "tools": [{"name": "Workflow", "description": "Run a workflow", "input_schema": WORKFLOW}],
        "tool_choice": {"type": "auto" if choice == "auto" else "any"},
    }
    reply, _ = post(server, "/v1/messages", anthropic)
    assert reply.status_code == 200, reply.text[:500]


def test_health_answers_while_a_large_schema_is_converted(server: Server) -> None:
    schema, _ = HOSTILE["13-deep anyOf through refs"]
    many = {"type": "object", "properties": {f"p{i}": {"enum": [f"v{j}" for j in range(400)]} for i in range(12)}}
    waits: list[float] = []

    def probe() -> None:
        for _ in range(10):
            started = time.monotonic()
            httpx.get(f"{server.base}/health", timeout=10)
            waits.append(time.monotonic() - started)

    prober = threading.Thread(target=probe)
    prober.start()
    for s in (schema, many):
        reply, took = post(
            server, "/v1/chat/completions", {"messages": ASK, "max_tokens": 1, "response_format": schema_format(s)}
        )
        assert reply.status_code in (200, 400) and took < ANSWER_S, reply.text[:300]
    prober.join()
    assert max(waits) < 1.5  # it waited 2.3-6.6 s behind a conversion on the event loop


def test_a_refused_count_costs_the_server_no_memory(server: Server) -> None:
    process = psutil.Process()
    before = process.memory_info().rss
    for key, value in (("minItems", 10_000_000), ("minItems", 1_000_000_000)):
        schema = {"type": "array", "items": {"type": "integer"}, key: value}
        refusal(post(server, "/v1/chat/completions", {"messages": ASK, "response_format": schema_format(schema)})[0])
    schema = {"type": "string", "minLength": 1_000_000_000}
    refusal(post(server, "/v1/chat/completions", {"messages": ASK, "response_format": schema_format(schema)})[0])
    assert process.memory_info().rss - before < 200 * 2**20
    alive(server)


def test_a_schema_whose_root_is_an_array_gets_its_array(server: Server) -> None:
    schema = {"type": "array", "items": {"enum": [1, 2, 3]}, "minItems": 1, "maxItems": 3}
    body = {"messages": ASK, "max_tokens": 40, "temperature": 0, "response_format": schema_format(schema)}
    reply, took = post(server, "/v1/chat/completions", body)
    assert reply.status_code == 200 and took < ANSWER_S, reply.text[:500]
    answer = json.loads(reply.json()["choices"][0]["message"]["content"])
    jsonschema.validate(answer, schema)
