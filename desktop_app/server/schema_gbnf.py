"""llama-cpp-python's JSON schema → GBNF converter (``llama_cpp/llama_grammar.py``, a port of
llama.cpp's ``json_schema_to_grammar``), loaded as SpecChat uses it.

- Loaded from its file: importing ``llama_cpp.llama_grammar`` would run the package's
  ``__init__``, which loads llama.cpp, and the window's side of the API must not.
- Our copy writes counts as chains of flat rules (:func:`repetition`) where the original
  unrolls them into nested optional groups (``maxItems: 20000`` nested 20,000 deep overflowed
  llama.cpp's recursive parser and killed the process); GBNF's own ``{m,n}`` is not used either,
  since llama.cpp's parser refuses counts that multiply past 2,000 in one sequence.
- Its string character excludes raw control characters, as llama.cpp's own converter does (JSON
  forbids them inside strings, and ``json.loads`` refuses them).
- Every schema goes through :func:`~desktop_app.server.schema_prep.prepare` first, and every
  grammar it gives is measured (:func:`~desktop_app.engine.grammar_limits.grammar_problem`).

These functions run in the grammar worker (:mod:`~desktop_app.server.grammar_worker`), which
bounds their time and memory.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from desktop_app.engine.grammar_limits import grammar_problem
from desktop_app.server.schema_prep import SchemaRefused, rooted

_LOOSE_CHAR = r'char ::= [^"\\] |'
_STRICT_CHAR = r'char ::= [^"\\\x7F\x00-\x1F] |'


# The rules of the conversion under way: repetition() adds its chains there.
_RULES: ContextVar[dict[str, str] | None] = ContextVar("_RULES", default=None)


def _up_to(content: str, n: int) -> str:
    """``content`` 0 to ``n`` times, as ``n`` flat rules (``c-i ::= (content c-(i-1))?``): what
    llama.cpp makes of ``{0,n}`` itself, without its nesting and without its parser's guard on
    repetitions (which refuses ``{m,n}`` whose counts multiply past 2,000 in one sequence)."""
    if n <= 0:
        return ""
    if n == 1:
        return f"({content})?"
    rules = _RULES.get()
    if rules is None:  # outside a conversion (the module's own constants)
        return f"({content}){{0,{n}}}"
    base = "rep-" + hashlib.sha1(content.encode()).hexdigest()[:10]  # the same content shares its chain
    for i in range(1, n + 1):
        rules.setdefault(f"{base}-{i}", f"({content})?" if i == 1 else f"({content} {base}-{i - 1})?")
    return f"{base}-{n}"


def repetition(
    item_rule: str,
    min_items: int,
    max_items: int | None,
    separator_rule: str | None = None,
    item_rule_is_literal: bool = False,
) -> str:
    """The converter's ``_build_repetition`` without nested groups: ``item_rule`` ``min_items``
    to ``max_items`` (None: any number of) times, ``separator_rule`` between them."""
    del item_rule_is_literal  # the original's shortcut for literals: a group is the same grammar
    if max_items == 0:
        return ""
    each = f"{separator_rule} {item_rule}" if separator_rule else item_rule
    if separator_rule and min_items == 0:
        rest = f"({each})*" if max_items is None else _up_to(each, max_items - 1)
        return f"({' '.join(p for p in (item_rule, rest) if p)})?"
    required = [item_rule] + [each] * (min_items - 1) if min_items > 0 else []
    rest = f"({each})*" if max_items is None else _up_to(each, max_items - min_items)
    return " ".join(p for p in (*required, rest) if p)


@cache
def converter_module() -> ModuleType:
    spec = importlib.util.find_spec("llama_cpp")  # finds the package without running its __init__
    assert spec is not None and spec.submodule_search_locations
    path = Path(next(iter(spec.submodule_search_locations))) / "llama_grammar.py"
    module_spec = importlib.util.spec_from_file_location("specchat_llama_grammar", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    module.__dict__["_build_repetition"] = repetition  # our copy only: the converter looks it up here
    return module


def json_object_gbnf() -> str:
    """llama.cpp's grammar of any JSON object (``response_format`` json_object)."""
    return str(converter_module().JSON_GBNF)


def new_converter(prop_order: dict[str, int] | None = None) -> Any:
    return converter_module().SchemaConverter(
        prop_order=prop_order or {}, allow_fetch=False, dotall=False, raw_pattern=False
    )


def finished(grammar: str) -> str:
    """``grammar`` with the strict string character, measured and parsed by llama.cpp;
    SchemaRefused past the limits or when llama.cpp refuses it."""
    grammar = grammar.replace(_LOOSE_CHAR, _STRICT_CHAR)
    problem = grammar_problem(grammar)
    if problem is None:
        from desktop_app.engine import grammar_parse_problem  # loads llama.cpp: in the worker only

        problem = grammar_parse_problem(grammar)
    if problem is not None:
        raise SchemaRefused(problem)
    return grammar


def convert(converter: Any, visit: Any) -> Any:
    """Run ``visit()`` (``converter`` at work), its failures as SchemaRefused (the converter
    asserts, and raises whatever a schema it did not expect makes it raise)."""
    token = _RULES.set(converter._rules)  # where repetition() writes its rules
    try:
        return visit()
    except SchemaRefused:
        raise
    except RecursionError:
        raise SchemaRefused("the schema is nested too deep") from None
    except Exception as exc:  # noqa: BLE001 - any failure of the converter is the schema's
        detail = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise SchemaRefused(f"the JSON schema is not supported: {detail}") from None
    finally:
        _RULES.reset(token)


def checked(schema: Any) -> None:
    """SchemaRefused when ``schema`` is not a valid JSON schema (draft 2020-12)."""
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        raise SchemaRefused(f"not a valid JSON schema: {exc.message[:200]}") from None
    except RecursionError:
        raise SchemaRefused("the schema is nested too deep") from None


def schema_gbnf(schema_json: str) -> str:
    """GBNF (root rule ``root``) of the JSON schema ``schema_json``; SchemaRefused saying why not."""
    original = json.loads(schema_json)
    schema = rooted(original)  # bounded first: the validator's own cost grows with the schema
    checked(original)
    converter = new_converter()

    def visit() -> None:
        converter.visit(converter.resolve_refs(schema, "schema"), "")

    convert(converter, visit)
    return finished(str(converter.format_grammar()))
