"""Schemas become grammars within a budget (issue 46): the hostile schemas of the report are each
refused in one line naming the part, or give a small grammar; ``$ref`` resolves inside a tool's
parameters; a property without a type is "anything"; the worker's time and memory budgets hold
and it comes back after a job past them; no grammar reaches llama.cpp nested past its parser.
A hypothesis fuzz of schemas checks that conversion never fails otherwise and stays in bounds,
and llama.cpp itself parses every grammar the fuzz produced, in a subprocess (a crash there must
not take pytest with it)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_app.engine.api import Tool
from desktop_app.engine.grammar_limits import MAX_NESTING, grammar_problem, measure
from desktop_app.engine.tool_calls import GEMMA4, GPT_OSS, HERMES, LLAMA3, MISTRAL, ToolFormat
from desktop_app.server.grammar_worker import GrammarWorker, budgeted
from desktop_app.server.schema_gbnf import schema_gbnf
from desktop_app.server.schema_prep import MAX_COUNT, SchemaRefused, prepare
from desktop_app.server.tool_grammar import tool_call_grammar

INTEGERS_20000 = {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 20000}


def chain_of_defs(levels: int) -> dict[str, Any]:
    """Each definition an anyOf of two references to the next: 2^levels ways down."""
    defs: dict[str, Any] = {
        f"D{i}": {"anyOf": [{"$ref": f"#/$defs/D{i + 1}"}, {"$ref": f"#/$defs/D{i + 1}"}]} for i in range(levels)
    }
    defs[f"D{levels}"] = {"type": "integer"}
    return {"$defs": defs, "$ref": "#/$defs/D0"}


def nested_any_of(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(levels):
        schema = {"anyOf": [schema, json.loads(json.dumps(schema))]}
    return schema


HOSTILE: dict[str, tuple[dict[str, Any], str]] = {  # schema, what the refusal names
    "enum of 100k strings": ({"enum": [f"value {i}" for i in range(100_000)]}, "'enum' at /"),
    "enum of 501 strings": ({"enum": [f"value {i}" for i in range(501)]}, "1 to 500 values"),
    "600 optional properties": (
        {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(600)}},
        "alternatives multiply",
    ),
    "nested pattern counts": ({"type": "string", "pattern": "^((a{0,100}){0,100}){0,100}$"}, "pattern at /"),
    "34 defs, each two refs": (chain_of_defs(34), "alternatives multiply"),
    "13-deep anyOf": (nested_any_of(13), "more than 10,000 sub-schemas"),
    "13-deep anyOf through refs": (chain_of_defs(13), "alternatives multiply"),
    "minItems 10,000,000": ({"type": "array", "items": {"type": "integer"}, "minItems": 10_000_000}, "'minItems'"),
    "minItems 10^9": ({"type": "array", "minItems": 1_000_000_000, "items": {"type": "string"}}, "'minItems'"),
    "minLength 10^9": ({"type": "string", "minLength": 1_000_000_000}, "'minLength' 1,000,000,000 at /"),
    "minLength in a property": (
        {"type": "object", "properties": {"essay": {"type": "string", "minLength": 10**8}}},
        "at /properties/essay",
    ),
}

PYDANTIC_STYLE = {  # what pydantic writes for nested models and enums
    "$defs": {
        "Colour": {"enum": ["red", "green"], "type": "string"},
        "Item": {
            "type": "object",
            "properties": {
                "colour": {"$ref": "#/$defs/Colour"},
                "count": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            },
            "required": ["colour", "count"],
        },
    },
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}, "maxItems": 3}},
    "required": ["items"],
}
WORKFLOW = {  # Claude Code's Workflow tool: a property with no type is JSON Schema's "anything"
    "type": "object",
    "properties": {"name": {"type": "string"}, "args": {"description": "Arguments for the workflow"}},
    "required": ["name", "args"],
}


def function(name: str, parameters: Any) -> Tool:
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_each_hostile_schema_is_refused_in_one_line_naming_the_part(case: str) -> None:
    schema, names = HOSTILE[case]
    started = time.monotonic()
    with pytest.raises(SchemaRefused) as refused:
        budgeted(schema_gbnf, json.dumps(schema))
    message = str(refused.value)
    assert names in message and "\n" not in message and len(message) < 300
    assert (
        "takes more than" not in message and "needs more than" not in message
    )  # refused by its bounds, not the budget
    assert time.monotonic() - started < 5
    with pytest.raises(ValueError, match=r"the function 'f' cannot be enforced"):
        tool_call_grammar(HERMES, [function("f", schema)], parallel=True)


def test_twenty_thousand_items_become_a_repetition_not_twenty_thousand_nested_groups() -> None:
    grammar = budgeted(schema_gbnf, json.dumps(INTEGERS_20000))
    size = measure(grammar)
    assert size.chars < 2_000 and size.nesting < MAX_NESTING and grammar_problem(grammar) is None
    counted = budgeted(schema_gbnf, json.dumps({**INTEGERS_20000, "maxItems": 500}))
    chain = [line for line in counted.splitlines() if line.startswith("rep-")]
    assert len(chain) == 499 and measure(counted).nesting < MAX_NESTING  # 499 flat rules, not 499 nested groups
    assert "{" not in counted.replace('"{"', "")  # no {m,n}: llama.cpp refuses counts that multiply past 2,000


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "minLength": 10_000},  # {10000,} is past llama.cpp's 2,000
        {"type": "string", "pattern": "^[a-z]{1,64}-[a-z]{0,64}-[0-9]{0,64}$"},  # 64 x 64 x 64 in one sequence
        {"type": "string", "pattern": "^(a{0,10}){0,10}$"},  # nested counts within their bound
        {"type": "array", "items": {"type": "string", "maxLength": 1000}, "maxItems": 3},
        {"type": "object", "properties": {k: {"type": "string", "maxLength": 100} for k in "abcdefghij"}},
    ],
)
def test_counts_llama_cpp_would_refuse_as_repetitions_still_become_grammars(schema: dict[str, Any]) -> None:
    assert grammar_problem(budgeted(schema_gbnf, json.dumps(schema))) is None  # and llama.cpp parsed it, in the worker


def test_nested_pattern_counts_past_their_product_are_refused() -> None:
    with pytest.raises(SchemaRefused, match="nests counts that multiply to 900, more than 100"):
        budgeted(schema_gbnf, json.dumps({"type": "string", "pattern": "^(a{0,30}){0,30}$"}))  # 1 s a token


def test_a_grammar_llama_cpp_cannot_parse_is_refused_in_one_line() -> None:
    dotted = {"type": "string", "pattern": "^[a-z]+(\\.[a-z]+)*$"}  # the converter writes "\." into a literal
    with pytest.raises(SchemaRefused, match="llama.cpp cannot parse the grammar"):
        budgeted(schema_gbnf, json.dumps(dotted))
    with pytest.raises(ValueError, match="the function 'f' cannot be enforced: llama.cpp cannot parse"):
        tool_call_grammar(HERMES, [function("f", dotted)], parallel=True)


def test_refs_resolve_against_the_parameters_own_root_in_every_call_syntax() -> None:
    for fmt in (HERMES, LLAMA3, MISTRAL, GPT_OSS):
        grammar = tool_call_grammar(fmt, [function("make", PYDANTIC_STYLE), function("other", PYDANTIC_STYLE)], True)
        assert grammar_problem(grammar) is None
        assert "call0-def-" in grammar and "call1-def-" in grammar  # each tool's own definitions
        assert '"\\"red\\""' in grammar


def test_a_property_without_a_type_is_any_value() -> None:
    grammar = tool_call_grammar(HERMES, [function("Workflow", WORKFLOW)], parallel=False)
    assert "call0-arguments-args ::=" in grammar
    rule = next(line for line in grammar.splitlines() if line.startswith("call0-arguments-args ::="))
    assert all(kind in rule for kind in ("array", "string", "number", "boolean", "null"))
    top, _ = prepare({"type": "object", "properties": {"x": {}, "y": True, "z": {"title": "Z", "minLength": 2}}})
    assert all(
        p == {"type": ["object", "array", "string", "number", "boolean", "null"]} for p in top["properties"].values()
    )


def test_counts_past_the_cap_are_dropped_when_they_only_allow_more() -> None:
    top, _ = prepare({"type": "string", "maxLength": 10**12, "minLength": 2})
    assert top == {"type": "string", "minLength": 2}
    top, _ = prepare({"type": "array", "maxItems": MAX_COUNT, "minItems": 1.0})
    assert top["maxItems"] == MAX_COUNT and top["minItems"] == 1 and isinstance(top["minItems"], int)
    with pytest.raises(SchemaRefused, match="'minItems' is above 'maxItems'"):
        prepare({"type": "array", "minItems": 3, "maxItems": 2})


def test_a_type_list_keeps_its_other_keywords() -> None:
    top, _ = prepare({"type": ["string", "null"], "maxLength": 3})
    assert top == {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null", "maxLength": 3}]}


def test_a_pattern_the_converter_would_loop_on_is_refused() -> None:
    with pytest.raises(SchemaRefused, match="unmatched"):
        budgeted(schema_gbnf, json.dumps({"type": "string", "pattern": "^a]$"}))


def slow_job(seconds: float) -> str:
    time.sleep(seconds)
    return 'root ::= "slow"'


def greedy_job(megabytes: int) -> str:
    hoard = bytearray(megabytes * 2**20)
    return f'root ::= "{len(hoard)}"'


def test_the_worker_refuses_a_job_past_its_time_or_memory_and_comes_back() -> None:
    worker = GrammarWorker(time_budget_s=1.0, memory=256 * 2**20)
    try:
        assert worker.run(slow_job, 0.01) == 'root ::= "slow"'
        started = time.monotonic()
        with pytest.raises(SchemaRefused, match="takes more than 1 s"):
            worker.run(slow_job, 30.0)
        assert time.monotonic() - started < 5
        if sys.platform.startswith("linux"):
            with pytest.raises(SchemaRefused, match="needs more than 256 MB"):
                worker.run(greedy_job, 2048)
        assert worker.run(greedy_job, 1) == f'root ::= "{2**20}"'
        with pytest.raises(SchemaRefused, match="takes more than"):
            worker.run(slow_job, 30.0)  # a refusal is kept: the same job is not run again
        assert worker.run(slow_job, 0.02) == 'root ::= "slow"'
    finally:
        worker.close()


# ---------------------------------------------------------------------------------- the fuzz
TYPES = ["object", "array", "string", "number", "integer", "boolean", "null"]
counts = st.one_of(
    st.integers(0, 6), st.integers(0, 10**12), st.floats(), st.booleans(), st.none(), st.just(-1), st.just(2.5)
)
pattern_parts = [
    "a",
    "b",
    "(",
    ")",
    "{0,100}",
    "{3}",
    "{2,}",
    "{,4}",
    "*",
    "+",
    "?",
    "[a-z]",
    "|",
    ".",
    "\\d",
    "]",
    "}",
]
patterns = st.lists(st.sampled_from(pattern_parts), max_size=10).map(lambda parts: "^" + "".join(parts) + "$")
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=4,
)
refs = st.sampled_from(["#", "#/$defs/a", "#/$defs/b", "#/definitions/a", "#/properties/a", "#/nope", "http://x/y"])
names = st.sampled_from(["a", "b", "root", "space", "string", "x y", "def-1", "call0-def-1", "$defs", "é"])
keywords = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from([*TYPES, "bogus"]) | st.lists(st.sampled_from(TYPES), max_size=3),
        "minItems": counts,
        "maxItems": counts,
        "minLength": counts,
        "maxLength": counts,
        "pattern": patterns,
        "enum": st.lists(json_values, max_size=4),
        "const": json_values,
        "format": st.sampled_from(["date", "uuid", "email", "time", "date-time"]),
        "description": st.text(max_size=4),
        "$ref": refs,
        "required": st.lists(names, max_size=2),
    },
)
schemas = st.recursive(
    st.booleans() | keywords,
    lambda inner: st.tuples(
        keywords,
        st.fixed_dictionaries(
            {},
            optional={
                "anyOf": st.lists(inner, max_size=3),
                "oneOf": st.lists(inner, max_size=3),
                "allOf": st.lists(inner, max_size=2),
                "items": inner | st.lists(inner, max_size=2),
                "prefixItems": st.lists(inner, max_size=2),
                "properties": st.dictionaries(names, inner, max_size=3),
                "additionalProperties": inner,
                "$defs": st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2),
                "definitions": st.dictionaries(st.sampled_from(["a"]), inner, max_size=1),
            },
        ),
    ).map(lambda pair: {**pair[0], **pair[1]}),
    max_leaves=16,
)
FUZZED: list[str] = []  # grammars the fuzz made, for llama.cpp's own parser below


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(schemas, st.sampled_from([HERMES, LLAMA3, MISTRAL, GPT_OSS, GEMMA4]))
def test_fuzzed_schemas_are_refused_in_one_line_or_become_grammars_within_bounds(schema: Any, fmt: ToolFormat) -> None:
    for build in (
        lambda: budgeted(schema_gbnf, json.dumps(schema)),
        lambda: tool_call_grammar(fmt, [function("f", schema), function("g", {"type": "object"})], parallel=True),
    ):
        try:
            grammar = build()
        except (SchemaRefused, ValueError) as exc:
            message = str(exc)
            assert message and "\n" not in message
            assert "takes more than" not in message and "needs more than" not in message, message
            continue
        assert grammar_problem(grammar) is None
        if len(FUZZED) < 400:
            FUZZED.append(grammar)


LLAMA_PARSES = """
import json, sys
import llama_cpp
from desktop_app.engine.llama.backend import ensure_backend
ensure_backend()
grammars = json.load(sys.stdin)
parsed = sum(bool(llama_cpp.llama_sampler_init_grammar(None, g.encode(), b"root")) for g in grammars)
print(json.dumps({"parsed": parsed, "of": len(grammars)}))
"""


def test_llama_cpp_parses_every_fuzzed_grammar_without_crashing() -> None:
    grammars = FUZZED or [budgeted(schema_gbnf, json.dumps(INTEGERS_20000))]
    deep = "root ::= " + '("a" ' * 20_000 + ")?" * 20_000  # what the converter wrote for 20,000 items
    done = subprocess.run(
        [sys.executable, "-c", LLAMA_PARSES], input=json.dumps(grammars), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["of"] == len(grammars)  # some are refused (left recursion through "#"), none crashes
    assert grammar_problem(deep) is not None  # never handed to llama.cpp (which overflows its stack on it)


ENGINE_REFUSES = """
from desktop_app.engine.errors import GrammarError
from desktop_app.engine.llama.grammar import _init
try:
    _init(None, "root ::= " + '("a" ' * 20000 + ")?" * 20000)
except GrammarError as exc:
    print("refused:", exc)
"""


def test_the_engine_refuses_a_grammar_nested_past_llama_cpps_parser() -> None:
    done = subprocess.run([sys.executable, "-c", ENGINE_REFUSES], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"nests groups 20,000 deep, more than {MAX_NESTING}" in done.stdout
