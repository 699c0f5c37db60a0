"""The GBNF grammar of a tool call, forced from the first token (``tool_choice`` "required" or a
named function) or, under "auto", lazily from where the model starts a call (the grammar begins
with the text of its family's :attr:`~desktop_app.engine.tool_calls.ToolFormat.trigger`): the
family's call syntax around each function's arguments, the arguments built from the
function's JSON schema by llama-cpp-python's converter (the one llama.cpp's
``json-schema-to-grammar`` is ported from), as llama.cpp's ``common/chat.cpp`` builds its own.

Each function's parameters are prepared first (:mod:`~desktop_app.server.schema_prep`: their
``$ref`` resolved against the parameters' own root and hoisted beside the call, counts and sizes
bounded), and the grammar is built in the grammar worker (:mod:`~desktop_app.server.grammar_worker`),
within its time and memory budget.

The grammar's ``root`` is one call, or with ``parallel`` one or more (the generic format's JSON:
``{"tool_call": call}``, and with ``parallel`` also ``{"tool_calls": [call, ...]}``). Gemma 4 writes arguments in
its own notation (:mod:`~desktop_app.engine.tool_values`): the grammar fixes its syntax and
the argument names; the values' types are the model's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from desktop_app.engine.api import Tool
from desktop_app.engine.tool_calls import (
    GEMMA4,
    GENERIC,
    GPT_OSS,
    HERMES,
    LLAMA3,
    MISTRAL,
    ToolFormat,
    tool_format_called,
)
from desktop_app.server.grammar_worker import budgeted
from desktop_app.server.schema_gbnf import convert, finished, new_converter
from desktop_app.server.schema_prep import SchemaRefused, prepare

# Gemma 4's values: strings between <|"|> quotes, bare numbers and literals, objects, lists.
_GEMMA_RULES = r"""
gemma-value ::= gemma-string | gemma-number | "true" | "false" | "null" | gemma-object | gemma-list
gemma-string ::= "<|\"|>" [^<]* "<|\"|>"
gemma-number ::= "-"? [0-9]+ ("." [0-9]+)?
gemma-object ::= "{" (gemma-key ":" gemma-value ("," gemma-key ":" gemma-value)*)? "}"
gemma-key ::= [a-zA-Z_] [a-zA-Z0-9_]*
gemma-list ::= "[" (gemma-value ("," gemma-value)*)? "]"
"""


def _literal(text: str) -> str:
    return json.dumps(text)  # GBNF's literals escape as JSON's strings do


def _parameters(tool: Tool) -> dict[str, Any]:
    schema = tool["function"].get("parameters")
    return schema if isinstance(schema, dict) and schema else {"type": "object"}


def tool_call_grammar(fmt: ToolFormat, tools: Sequence[Tool], parallel: bool) -> str:
    """GBNF (root rule ``root``) for a call of one of ``tools`` in ``fmt``'s syntax; ValueError
    naming the function when its schema cannot become a grammar within the budget."""
    try:
        return budgeted(build_tool_grammar, fmt.name, [dict(t) for t in tools], parallel)
    except SchemaRefused as exc:
        raise ValueError(str(exc)) from None


def build_tool_grammar(fmt_name: str, tools: list[Tool], parallel: bool) -> str:
    """:func:`tool_call_grammar`'s work, in the grammar worker."""
    fmt = tool_format_called(fmt_name)
    converter = new_converter({"name": 0, "arguments": 1, "parameters": 1})
    calls: list[str] = []
    for i, tool in enumerate(tools):
        name = tool["function"]["name"]
        try:
            calls.append(_call_rule(fmt, converter, f"call{i}", name, _parameters(tool)))
        except SchemaRefused as exc:
            raise SchemaRefused(f"the parameters of the function '{name}' cannot be enforced: {exc}") from None
    call = " | ".join(calls)
    if fmt == MISTRAL:
        items = f"({call})" + (f' ("," space ({call}))*' if parallel else "")
        root = f'"[TOOL_CALLS]" "[" {items} "]"'
    elif fmt == GENERIC:  # {"tool_call": call}, or with parallel {"tool_calls": [call, ...]} too
        one, many = _literal('"tool_call"'), _literal('"tool_calls"')
        root = f'"{{" space {one} space ":" space ({call}) "}}" space'
        if parallel:
            root += (
                f' | "{{" space {many} space ":" space "[" space ({call}) ("," space ({call}))* "]" space "}}" space'
            )
    else:
        separator = '"\\n"' if fmt == HERMES else '";" space' if fmt == LLAMA3 else '""'
        root = f"({call})" + (f" ({separator} ({call}))*" if parallel else "")
    try:
        return finished(f"root ::= {root}\n{converter.format_grammar()}\n{_GEMMA_RULES if fmt == GEMMA4 else ''}")
    except SchemaRefused as exc:
        for tool in tools if len(tools) > 1 else ():
            build_tool_grammar(fmt_name, [tool], parallel)  # the function whose grammar fails, named
        names = ", ".join(f"'{t['function']['name']}'" for t in tools)
        raise SchemaRefused(f"the parameters of the function {names} cannot be enforced: {exc}") from None


def _call_rule(fmt: ToolFormat, converter: Any, rule: str, name: str, parameters: dict[str, Any]) -> str:
    def schema_rule(schema: dict[str, Any], defs: dict[str, Any]) -> str:
        whole = {**schema, "$defs": defs} if defs else schema  # the parameters' refs resolve here
        return str(convert(converter, lambda: converter.visit(converter.resolve_refs(whole, rule), rule)))

    if fmt in (HERMES, LLAMA3, MISTRAL, GENERIC):
        arguments, defs = prepare(parameters, f"{rule}-")
        key = "parameters" if fmt == LLAMA3 else "arguments"
        body = {"type": "object", "properties": {"name": {"const": name}, key: arguments}, "required": ["name", key]}
        call = schema_rule(body, defs)
        return f'"<tool_call>\\n" {call} "\\n</tool_call>"' if fmt == HERMES else call
    if fmt == GPT_OSS:
        arguments, defs = prepare(parameters, f"{rule}-")
        head = _literal(f"<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>")
        if "$ref" in arguments:
            arguments = {"anyOf": [arguments]}  # the converter resolves nothing beside a root $ref
        return f"{head} {schema_rule(arguments, defs)}"
    if fmt == GEMMA4:
        keys = [k for k in parameters.get("properties", {}) if isinstance(k, str)]
        key = " | ".join(_literal(k) for k in keys) if keys else "gemma-key"
        pair = f'({key}) ":" gemma-value'
        return f'{_literal(f"<|tool_call>call:{name}")} "{{" ({pair} ("," {pair})*)? "}}" "<tool_call|>"'
    raise SchemaRefused(f"no grammar for the {fmt.name} call syntax")
