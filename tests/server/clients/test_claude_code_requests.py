"""/v1/messages as Claude Code calls it, with the real anthropic SDK on the factory's tools model
(Qwen 2.5's template): a request shaped like Claude Code's (system as blocks with
``cache_control``, ``metadata``, tools, ``tool_choice`` any, ``thinking`` enabled,
``context_management``, ``output_config``, the ``anthropic-beta`` header through the SDK's beta
client, a system turn as ``messages[1]``) answers with a call, streamed; ``/v1/messages/count_tokens`` gives the answer's
``usage.input_tokens`` for the same request, tools included; errors keep Anthropic's shape."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2 as httpx
import pytest

from tests.server.conftest import serving
from tests.server.live_server import Server

KEY = "claude-code-key"
BASH = {
    "name": "Bash",
    "description": "Run a shell command",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string", "enum": ["ls", "pwd"]}},
        "required": ["command"],
    },
}
SYSTEM = [
    {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
    {"type": "text", "text": "Use the tools to answer.", "cache_control": {"type": "ephemeral"}},
]
ASK = [
    {"role": "user", "content": [{"type": "text", "text": "List the files.", "cache_control": {"type": "ephemeral"}}]}
]
# Claude Code 2.1 sends a system turn as messages[1]; it joins the system prompt.
REMINDER = {"role": "system", "content": [{"type": "text", "text": "Answer with a tool call."}]}
BETAS = ["claude-code-20250219", "interleaved-thinking-2025-05-14", "context-management-2025-06-27"]


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.tools, key=KEY) as served:
        yield served


@pytest.fixture()
def client(server: Server) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.base, api_key=KEY, max_retries=0, timeout=120)


def test_a_request_shaped_like_claude_codes_gets_a_streamed_call(client: anthropic.Anthropic) -> None:
    with client.beta.messages.stream(
        model="claude-sonnet-4-5",
        max_tokens=32000,
        system=SYSTEM,  # type: ignore[arg-type]
        messages=[*ASK, REMINDER],  # type: ignore[arg-type]
        tools=[{**BASH, "cache_control": {"type": "ephemeral"}}],  # type: ignore[list-item]
        tool_choice={"type": "any", "disable_parallel_tool_use": True},
        thinking={"type": "enabled", "budget_tokens": 31999},
        metadata={"user_id": "user_abc_account_def_session_123"},
        context_management={"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},  # type: ignore[typeddict-item]
        output_config={"effort": "high"},
        betas=BETAS,
        extra_body={"temperature": 1},
        extra_headers={"anthropic-version": "2023-06-01", "x-app": "cli"},
    ) as stream:
        kinds = [getattr(e.delta, "type", "") for e in stream if e.type == "content_block_delta"]
        final = stream.get_final_message()
    assert "input_json_delta" in kinds
    assert final.stop_reason == "tool_use"
    (call,) = [b for b in final.content if b.type == "tool_use"]
    assert call.name == "Bash" and call.input["command"] in ("ls", "pwd")  # type: ignore[index]


def test_count_tokens_is_the_answers_input_tokens_with_tools(client: anthropic.Anthropic) -> None:
    request: dict[str, Any] = {"model": "x", "system": SYSTEM, "messages": ASK, "tools": [BASH]}
    counted = client.messages.count_tokens(**request)
    answered = client.messages.create(max_tokens=4, extra_body={"temperature": 0}, **request)
    assert counted.input_tokens == answered.usage.input_tokens
    bare = client.messages.count_tokens(model="x", messages=ASK)  # type: ignore[arg-type]
    assert counted.input_tokens > bare.input_tokens + 30  # the tools and the system prompt are in it


def bare_count(url: str, headers: dict[str, str]) -> Any:
    return httpx.post(url, json={"messages": ASK}, headers=headers, timeout=30).json()


def test_count_tokens_errors_have_anthropics_shape(server: Server) -> None:
    url = f"{server.base}/v1/messages/count_tokens"
    no_key = httpx.post(url, json={"messages": ASK}, timeout=30)
    assert no_key.status_code == 401 and no_key.json()["error"]["type"] == "authentication_error"
    headers = {"x-api-key": KEY}
    empty = httpx.post(url, json={"model": "x", "messages": []}, headers=headers, timeout=30)
    assert empty.status_code == 400
    assert empty.json() == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "messages: must be a non-empty list"},
    }
    not_json = httpx.post(url, content=b"{", headers={**headers, "content-type": "application/json"}, timeout=30)
    assert not_json.status_code == 400 and not_json.json()["type"] == "error"
    wrong_method = httpx.get(url, headers=headers, timeout=30)
    assert wrong_method.status_code == 405 and wrong_method.json()["type"] == "error"
    search = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
    server_tool = httpx.post(url, json={"messages": ASK, "tools": [search]}, headers=headers, timeout=30)
    assert server_tool.json() == bare_count(url, headers)  # left out of the prompt (test_unserved_tools.py)
    bad_thinking = httpx.post(url, json={"messages": ASK, "thinking": {"type": "sometimes"}}, headers=headers)
    assert bad_thinking.status_code == 400 and "thinking.type" in bad_thinking.json()["error"]["message"]
