"""Tool calls parsed from model answers, per family, on texts as llama.cpp's tests/test-chat.cpp
writes them (its `message_assist_call`: special_function with {"arg1": 1}); and the family read
from real templates' markers."""

from __future__ import annotations

import json

import pytest

from desktop_app.engine.llama.generic_tools import generic_messages
from desktop_app.engine.messages import Message
from desktop_app.engine.tool_calls import (
    GEMMA4,
    GENERIC,
    GPT_OSS,
    HERMES,
    LLAMA3,
    MISTRAL,
    ParsedCall,
    ToolFormat,
    parse_tool_calls,
    tool_format_named,
)


@pytest.mark.parametrize(
    ("fmt", "text", "content"),
    [
        (HERMES, '<tool_call>\n{"name": "special_function", "arguments": {"arg1": 1}}\n</tool_call>', ""),
        (
            HERMES,
            'Hello, world!\nWhat\'s up?<tool_call>{"name": "special_function", "arguments": {"arg1": 1}}</tool_call>',
            "Hello, world!\nWhat's up?",
        ),
        (
            HERMES,
            '<tool_call>\n{"name": "special_function", "arguments": {"arg1": 1}}',
            "",
        ),  # cut at the end of the turn
        (LLAMA3, '{"name": "special_function", "parameters": {"arg1": 1}}', ""),
        (GENERIC, '{"tool_call": {"name": "special_function", "arguments": {"arg1": 1}}}', ""),
        (
            GENERIC,
            ' {\n "tool_calls": [{"name": "special_function", "arguments": {"arg1": 1}, "id": "123456789"}]}',
            "",
        ),
        (LLAMA3, '{"type": "function", "name": "special_function", "parameters": {"arg1": 1}}', ""),
        (LLAMA3, '<|python_tag|>{"name": "special_function", "parameters": {"arg1": 1}}', ""),
        (MISTRAL, '[TOOL_CALLS][{"name": "special_function", "arguments": {"arg1": 1}}]', ""),
        (MISTRAL, '[TOOL_CALLS]special_function[ARGS]{"arg1": 1}', ""),
        (GEMMA4, "<|tool_call>call:special_function{arg1:1}<tool_call|>", ""),
        (GPT_OSS, '<|channel|>commentary to=functions.special_function <|constrain|>json<|message|>{"arg1": 1}', ""),
        (GPT_OSS, ' to=functions.special_function<|channel|>commentary json<|message|>{"arg1": 1}', ""),
        (
            GPT_OSS,
            '<|start|>assistant to=functions.special_function<|channel|>commentary json<|message|>{"arg1": 1}',
            "",
        ),
    ],
)
def test_each_family_s_call_is_parsed(fmt: ToolFormat, text: str, content: str) -> None:
    parsed = parse_tool_calls(text, fmt)
    assert parsed.content == content
    assert [(c.name, json.loads(c.arguments or "")) for c in parsed.calls] == [("special_function", {"arg1": 1})]


def test_parallel_calls_keep_their_order() -> None:
    hermes = "<tool_call>\n" + '{"name": "a", "arguments": {}}' + "\n</tool_call>\n<tool_call>\n"
    hermes += '{"name": "b", "arguments": {"x": "y"}}' + "\n</tool_call>"
    assert [c.name for c in parse_tool_calls(hermes, HERMES).calls] == ["a", "b"]
    llama = '{"name": "a", "parameters": {}}; {"name": "b", "parameters": {"x": 1}}'
    assert [c.name for c in parse_tool_calls(llama, LLAMA3).calls] == ["a", "b"]
    nemo = '[TOOL_CALLS][{"name": "a", "arguments": {}, "id": "123456789"}, {"name": "b", "arguments": {}, "id": "abcdefghi"}]'
    assert [(c.name, c.id) for c in parse_tool_calls(nemo, MISTRAL).calls] == [("a", "123456789"), ("b", "abcdefghi")]


def test_gemma_values_become_json() -> None:
    text = '<|tool_call>call:search{query:<|"|>weather, "Paris"<|"|>,n:3,exact:false,tags:[<|"|>a<|"|>,2],opts:{deep:true}}<tool_call|>'
    call = parse_tool_calls(text, GEMMA4).calls[0]
    assert call.name == "search"
    assert json.loads(call.arguments or "") == {
        "query": 'weather, "Paris"',
        "n": 3,
        "exact": False,
        "tags": ["a", 2],
        "opts": {"deep": True},
    }


def test_llama_builtin_tool_call() -> None:
    parsed = parse_tool_calls('<|python_tag|>brave_search.call(query="What is the weather?")', LLAMA3)
    assert [(c.name, json.loads(c.arguments or "")) for c in parsed.calls] == [
        ("brave_search", {"query": "What is the weather?"})
    ]


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        (HERMES, "No tools needed: it is sunny."),
        (HERMES, "<tool_call>\n{not json at all}\n</tool_call>"),  # a broken call stays text
        (LLAMA3, '{"answer": 42}'),  # a JSON answer, not a call
        (MISTRAL, "Plain words."),
        (GEMMA4, "<|tool_call>call:f{unterminated"),
        (GPT_OSS, "Just an answer."),
        (GENERIC, 'Call {"tool_call": {"name": "f", "arguments": {}}}'),  # a call is the whole answer
        (GENERIC, '{"answer": 42}'),  # a JSON answer, not a call
        (GENERIC, '{"tool_call": {"name": "f", "arguments": {'),  # an unfinished call
        (GENERIC, '{"tool_calls": [{"arguments": {}}]}'),  # a call without a name
    ],
)
def test_text_without_a_valid_call_is_all_answer(fmt: ToolFormat, text: str) -> None:
    assert parse_tool_calls(text, fmt).content == text
    assert parse_tool_calls(text, fmt).calls == ()


def test_a_streaming_answer_holds_back_an_opening_call_and_names_it_first() -> None:
    assert parse_tool_calls("Let me check.<tool_", HERMES, partial=True).content == "Let me check."
    growing = 'Let me check.<tool_call>\n{"name": "get_weather", "argu'
    parsed = parse_tool_calls(growing, HERMES, partial=True)
    assert parsed.content == "Let me check."
    assert parsed.calls == (ParsedCall("get_weather", None),)
    done = parse_tool_calls(growing + 'ments": {"city": "Paris"}}\n</tool', HERMES, partial=True)
    assert done.calls == (ParsedCall("get_weather", '{"city": "Paris"}'),)
    assert parse_tool_calls('{"name": "f", "parameters": {"a"', LLAMA3, partial=True).calls == (ParsedCall("f", None),)


def test_a_generic_answer_streams_its_text_and_holds_back_its_json() -> None:
    assert parse_tool_calls('{"response": "Hi {there}"} ', GENERIC).content == "Hi {there}"
    assert parse_tool_calls('{"response": {"a": 1}}', GENERIC).content == '{"a": 1}'
    assert parse_tool_calls("The weather is", GENERIC, partial=True).content == "The weather is"
    assert parse_tool_calls('{"answer": 4', GENERIC, partial=True).content == '{"answer": 4'  # not a call
    for held in (" {", '{"tool_c', '{"respo', '{"tool_calls": [{"name": "f"'):
        assert parse_tool_calls(held, GENERIC, partial=True).content == "", held
    growing = parse_tool_calls('{"tool_call": {"name": "f", "arguments": {"a"', GENERIC, partial=True)
    assert growing.calls == (ParsedCall("f", None),)


def test_a_template_without_tools_gets_them_in_its_system_turn_and_calls_as_text() -> None:
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    history = [
        Message(role="system", content="Be brief."),
        Message(role="user", content="Weather in Paris and Lima?"),
        Message(role="assistant", content="", tool_calls=[call, {**call, "id": "c2"}]),  # type: ignore[list-item]
        Message(role="tool", content="Sunny", tool_call_id="c1"),
        Message(role="tool", content="Rain", tool_call_id="c2"),
    ]
    shown = generic_messages(history, [tool])  # type: ignore[list-item]
    assert [m["role"] for m in shown] == ["system", "user", "assistant", "user"]
    assert shown[0]["content"].startswith("Be brief.\n\n") and '"get_weather"' in shown[0]["content"]
    calls = json.loads(shown[2]["content"])["tool_calls"]
    assert [c["arguments"] for c in calls] == [{"city": "Paris"}, {"city": "Paris"}]
    assert "Sunny" in shown[3]["content"] and "Rain" in shown[3]["content"] and "c2" in shown[3]["content"]
    assert generic_messages(history[1:2], [tool])[0]["role"] == "system"
    assert generic_messages(history[:2], []) == history[:2]  # no tools offered: nothing said of them


@pytest.mark.parametrize(
    ("marker", "fmt"),
    [
        ("<tool_call>", HERMES),
        ("<|start_header_id|>ipython<|end_header_id|>", LLAMA3),
        ("[TOOL_CALLS]", MISTRAL),
        ("<|tool_call>call:", GEMMA4),
        ("<|start|>assistant<|channel|>commentary", GPT_OSS),
    ],
)
def test_the_family_is_read_from_the_template(marker: str, fmt: ToolFormat) -> None:
    assert tool_format_named("{% for tool in tools %}" + marker + "{% endfor %}") == fmt
    assert tool_format_named("{{ messages }}") is None


def test_mistral_ids_fit_its_templates() -> None:
    assert len(MISTRAL.new_call_id()) == 9 and MISTRAL.new_call_id().isalnum()
    assert HERMES.new_call_id().startswith("call_")
