"""A value of the wrong type anywhere in a /v1/messages or /v1/responses body is a 400 whose one-line
message names the field, never a 500 with a traceback: valid bodies (tools, thinking, tool calls
and results in the history, structured output) mutated at every path into every other JSON type,
through the parsers (hypothesis: hundreds of cases in a second) and through a real server (the
reported bodies and a sample of mutations)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_app.engine.reasoning import THINK_TAGS
from desktop_app.engine.tool_calls import HERMES
from desktop_app.server.anthropic_api import parse_messages_request
from desktop_app.server.engine_backend import EngineBackend
from desktop_app.server.errors import BadRequest
from desktop_app.server.openai_schema import parse_request
from desktop_app.server.request_body import FINITE, BadNumber
from desktop_app.server.responses_api import parse_responses_request, text_format
from tests.server.live_server import LogRecorder, Server

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
ANTHROPIC = {
    "model": "m",
    "max_tokens": 8,
    "system": [{"type": "text", "text": "Be brief."}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "use the tool", "signature": "s"},
                {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "sunny"}]},
                {"type": "text", "text": "And tomorrow?"},
            ],
        },
    ],
    "tools": [{"name": "weather", "description": "The weather", "input_schema": SCHEMA}],
    "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
    "thinking": {"type": "enabled", "budget_tokens": 1024, "display": "summarized"},
    "output_config": {"effort": "low"},
    "stop_sequences": ["END"],
    "metadata": {"user_id": "u"},
    "stream": False,
    "temperature": 0,
}
RESPONSES = {
    "model": "m",
    "instructions": "Be brief.",
    "max_output_tokens": 8,
    "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": '{"city": "Paris"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
        {"role": "user", "content": "And tomorrow?"},
    ],
    "tools": [{"type": "function", "name": "weather", "description": "The weather", "parameters": SCHEMA}],
    "tool_choice": {"type": "function", "name": "weather"},
    "parallel_tool_calls": False,
    "reasoning": {"effort": "low"},
    "stream": False,
    "temperature": 0,
}
RESPONSES_FORMAT = {
    "model": "m",
    "input": "Weather in Paris?",
    "text": {"format": {"type": "json_schema", "name": "w", "schema": SCHEMA, "strict": True}},
}
# Every JSON type, the shapes that broke the parsers (unhashable where a string was compared), and
# a number no parameter takes (what the body reader makes of 1e999 or 5,000 digits): quoted in a
# 400's message it was a TypeError, a 500 (found by test_fuzz.py).
WRONG: list[Any] = [[], {}, ["text"], {"a": []}, [{}], 1, -1.5, True, "x", "", BadNumber("1e999", FINITE)]
# Inside these the client's own JSON schema: its grammar is structured_output's and tool_grammar's.
OWNED = ("input_schema", "parameters", "schema")


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key and list index in a body (not inside a schema)."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield (*prefix, key)
        if key not in OWNED:
            yield from paths(child, (*prefix, key))


def mutated(body: dict[str, Any], path: tuple[Any, ...], new: Any) -> dict[str, Any]:
    out = copy.deepcopy(body)
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = new
    return out


def parse_anthropic(body: object) -> None:
    parse_messages_request(body, tool_format=HERMES, reasoning=THINK_TAGS)


def parse_responses(body: object) -> None:
    parse_responses_request(body, tool_format=HERMES)
    text_format(body)


CHAT = {
    "model": "m",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ],
    "tools": [{"type": "function", "function": {"name": "weather", "parameters": SCHEMA}}],
    "response_format": {"type": "json_schema", "json_schema": {"name": "w", "schema": SCHEMA}},
    "speculation": "auto",
    "drafter": "ngram",
    "logit_bias": {"1": 2},
    "max_tokens": 8,
    "temperature": 0,
}


def parse_chat(body: object) -> None:
    parse_request(body, chat=True)


CASES = [
    (ANTHROPIC, parse_anthropic),
    (RESPONSES, parse_responses),
    (RESPONSES_FORMAT, parse_responses),
    (CHAT, parse_chat),
]
MUTATIONS = [(i, path, new) for i, (body, _) in enumerate(CASES) for path in paths(body) for new in WRONG]


def test_the_valid_bodies_parse() -> None:
    for body, parse in CASES:
        parse(body)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(MUTATIONS))
def test_a_wrong_type_anywhere_is_refused_by_name_or_accepted(mutation: tuple[int, tuple[Any, ...], Any]) -> None:
    i, path, new = mutation
    body, parse = CASES[i]
    try:
        parse(mutated(body, path, new))
    except BadRequest as exc:
        message = str(exc)
        assert message and "\n" not in message and len(message) < 300, message
        assert "Traceback" not in message


def test_every_mutation_is_refused_by_name_or_accepted() -> None:
    """The same, exhaustively (a few thousand parses): hypothesis samples, this covers every one."""
    for i, path, new in MUTATIONS:
        body, parse = CASES[i]
        try:
            parse(mutated(body, path, new))
        except BadRequest:
            pass


@pytest.fixture(scope="module")
def server(backend: EngineBackend) -> Iterator[Server]:
    served = Server(backend)
    yield served
    served.stop()


REPORTED = [
    ("messages", {"messages": [{"role": "user", "content": [{"type": ["text"], "text": "hi"}]}]}, "messages.0.content.0.type"),
    ("messages", {"messages": [{"role": "user", "content": "hi"}], "tool_choice": {"type": []}}, "tool_choice.type"),
    ("messages", {"messages": [{"role": "user", "content": "hi"}], "system": [{"type": "text", "text": {}}]}, "system.0.text"),
    ("responses", {"input": "hi", "reasoning": {"effort": []}}, "reasoning.effort"),
    ("responses", {"input": [{"type": ["message"], "role": "user", "content": "hi"}]}, "input.0.type"),
    ("responses", {"input": [{"role": "user", "content": [{"type": {}, "text": "hi"}]}]}, "input.0.content.0.type"),
    ("responses", {"input": "hi", "text": {"format": {"type": []}}}, "text.format.type"),
]  # fmt: skip


@pytest.mark.parametrize(("endpoint", "body", "field"), REPORTED)
def test_the_reported_bodies_are_a_400_naming_the_field(
    server: Server, endpoint: str, body: dict[str, Any], field: str
) -> None:
    body = {"model": "m", "max_tokens": 4, **body} if endpoint == "messages" else {"model": "m", **body}
    with LogRecorder() as log:
        response = httpx.post(f"{server.url}/{endpoint}", json=body, timeout=60)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert field in error["message"] and "\n" not in error["message"], error
    assert not [r for r in log.records if r.exc_info], "a traceback was logged"


def test_mutations_through_the_server_are_never_a_500(server: Server) -> None:
    """Every path of each valid body, turned into a list, through the real server."""
    for body, parse in CASES:
        endpoint = "messages" if parse is parse_anthropic else "responses"
        for path in paths(body):
            response = httpx.post(f"{server.url}/{endpoint}", json=mutated(body, path, ["x"]), timeout=60)
            assert response.status_code < 500, (path, response.text)
