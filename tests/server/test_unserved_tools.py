"""Tools the server cannot run (the Responses API's ``web_search`` and ``namespace`` that Codex
sends, Chat Completions' ``custom`` tools, Anthropic's server tools) are left out of the prompt
with one log line each, and the request is answered with the client's function tools; a tool whose
schema says nothing of a property's type (Claude Code's ``Workflow``) is answered, never a 500.
The real server on the factory's tools model (Qwen 2.5's template), the real SDKs."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2 as httpx
import openai
import pytest

from tests.server.conftest import serving
from tests.server.live_server import LogRecorder, Server

CITY = {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Tokyo"]}}, "required": ["city"]}
ASK = "What is the weather in Paris?"
# Claude Code's Workflow tool: a property with a description and no type (JSON Schema's "anything").
WORKFLOW = {
    "name": "Workflow",
    "description": "Run a workflow",
    "input_schema": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "args": {"description": "The workflow's arguments"}},
        "required": ["name"],
    },
}


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.tools) as served:
        yield served


def _left_out(log: LogRecorder) -> list[str]:
    return [r.getMessage() for r in log.records if "left out of the prompt" in r.getMessage()]


def test_codexs_namespace_and_web_search_tools_are_left_out_with_one_note(server: Server) -> None:
    client = openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)
    space = f"mcp__docs_{uuid.uuid4().hex[:6]}"  # new to this process's notes
    tools: Any = [
        {"type": "function", "name": "get_weather", "description": "The weather", "parameters": CITY},
        {"type": "web_search", "search_context_size": "medium"},
        {"type": "namespace", "name": space, "description": "Docs", "tools": [{"type": "function", "name": "f"}]},
    ]
    with LogRecorder() as log:
        for _ in range(2):
            reply = client.responses.create(
                model="gpt-5-codex", input=ASK, tools=tools, tool_choice="required", max_output_tokens=200
            )
            calls = [item for item in reply.output if item.type == "function_call"]
            assert calls and all(c.name == "get_weather" for c in calls), reply.output
            assert json.loads(calls[0].arguments)["city"] in ("Paris", "Tokyo")
            assert [t.type for t in reply.tools] == ["function"]
    notes = _left_out(log)
    assert len([n for n in notes if space in n]) == 1, notes  # once, for two requests
    assert len([n for n in notes if "web_search" in n]) <= 1, notes  # (noted already if another test sent it)


def test_anthropic_server_tools_are_left_out_and_the_client_tool_is_called(server: Server) -> None:
    claude = anthropic.Anthropic(base_url=server.base, api_key="none", max_retries=0, timeout=120)
    weather = {"name": "get_weather", "description": "The weather", "input_schema": CITY}
    server_tools: Any = [
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
        {"type": "bash_20250124", "name": "bash"},
        {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
    ]
    with LogRecorder() as log:
        reply = claude.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=200,
            messages=[{"role": "user", "content": ASK}],
            tools=[*server_tools, weather],
            tool_choice={"type": "any"},
        )
    calls = [block for block in reply.content if block.type == "tool_use"]
    assert calls and all(c.name == "get_weather" for c in calls) and reply.stop_reason == "tool_use", reply
    assert not [r for r in log.records if r.exc_info]


def test_a_custom_chat_tool_is_left_out(server: Server) -> None:
    body = {
        "messages": [{"role": "user", "content": ASK}],
        "tools": [
            {"type": "custom", "custom": {"name": "apply_patch", "description": "Edit files"}},
            {"type": "function", "function": {"name": "get_weather", "parameters": CITY}},
        ],
        "tool_choice": "required",
        "max_tokens": 200,
    }
    reply = httpx.post(f"{server.url}/chat/completions", json=body, timeout=120)
    assert reply.status_code == 200, reply.text
    calls = reply.json()["choices"][0]["message"]["tool_calls"]
    assert calls and all(c["function"]["name"] == "get_weather" for c in calls), calls


@pytest.mark.parametrize("choice", ["auto", "any"])
def test_claude_codes_workflow_tool_is_answered_on_both_endpoints(server: Server, choice: str) -> None:
    with LogRecorder() as log:
        messages = httpx.post(
            f"{server.url}/messages",
            json={"max_tokens": 200, "messages": [{"role": "user", "content": "Run the build workflow."}]}
            | {"tools": [WORKFLOW], "tool_choice": {"type": choice}},
            timeout=120,
        )
        function = {"name": "Workflow", "description": WORKFLOW["description"], "parameters": WORKFLOW["input_schema"]}
        chat = httpx.post(
            f"{server.url}/chat/completions",
            json={"max_tokens": 200, "messages": [{"role": "user", "content": "Run the build workflow."}]}
            | {"tools": [{"type": "function", "function": function}]}
            | {"tool_choice": "required" if choice == "any" else "auto"},
            timeout=120,
        )
    assert messages.status_code == 200, messages.text
    assert chat.status_code == 200, chat.text
    assert not [r for r in log.records if r.exc_info], "a traceback was logged"
    answer = messages.json()
    calls = [b for b in answer["content"] if b["type"] == "tool_use"]
    if choice == "any":  # a call, unless the random model's "anything" outran max_tokens
        assert answer["stop_reason"] == "max_tokens" or [c["name"] for c in calls] == ["Workflow"], answer


def test_a_schema_no_grammar_takes_leaves_the_calls_unconstrained_under_auto(server: Server) -> None:
    odd = {"type": "object", "properties": {"x": {"type": "bogus"}}}
    body = {"messages": [{"role": "user", "content": ASK}], "max_tokens": 8}
    tools = [{"type": "function", "function": {"name": "odd", "parameters": odd}}]
    auto = httpx.post(f"{server.url}/chat/completions", json={**body, "tools": tools}, timeout=120)
    assert auto.status_code == 200, auto.text
    forced = httpx.post(
        f"{server.url}/chat/completions", json={**body, "tools": tools, "tool_choice": "required"}, timeout=120
    )
    assert forced.status_code == 400 and "'odd'" in forced.json()["error"]["message"], forced.text
