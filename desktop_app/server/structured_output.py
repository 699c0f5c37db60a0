"""Structured output: OpenAI's ``response_format`` (and the Responses API's ``text.format``) as a
grammar the engine follows, and the check of the finished answer.

- ``text``: no grammar.
- ``json_object``: llama.cpp's JSON grammar (any JSON object).
- ``json_schema``: the schema turned into GBNF by llama-cpp-python's converter
  (``llama_cpp/llama_grammar.py``, a port of llama.cpp's ``json_schema_to_grammar``). Keywords the
  converter does not enforce (``minimum``, ``multipleOf``, ``not``...) are a 400 naming the keyword,
  so no schema is accepted that the grammar could not keep.

Fails closed: the finished answer is parsed and validated (``jsonschema``); an answer cut short
by ``max_tokens`` or one that does not validate is an error for the client, never a success.

The schema is prepared within bounds and converted in the grammar worker, off the event loop's
thread and within a time and memory budget (:mod:`~desktop_app.server.schema_prep`,
:mod:`~desktop_app.server.grammar_worker`): a schema past them is a 400 saying where and why.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import jsonschema
from starlette.responses import JSONResponse

from desktop_app.engine.api import FinishReason
from desktop_app.engine.events import Finished
from desktop_app.engine.stats import GenerationStats
from desktop_app.server.errors import error
from desktop_app.server.grammar_worker import budgeted
from desktop_app.server.openai_schema import BadRequest
from desktop_app.server.request_body import body_json
from desktop_app.server.schema_gbnf import json_object_gbnf, schema_gbnf
from desktop_app.server.schema_prep import SchemaRefused

# JSON Schema keywords the grammar converter reads nowhere: a schema using one is refused,
# because the answer could follow the grammar and still break the schema.
UNENFORCED = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "not",
    "if",
    "then",
    "else",
    "uniqueItems",
    "contains",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
)
# Keywords whose value is itself a schema, a list or a map of them (where the walk looks for UNENFORCED).
_SUBSCHEMAS = ("items", "additionalProperties", "prefixItems", "anyOf", "oneOf", "allOf", "properties", "$defs")


@dataclass(frozen=True)
class OutputFormat:
    """What the answer must be: ``grammar`` for the engine, ``schema`` (None: any JSON object)
    for the check; ``grammar`` None is plain text."""

    grammar: str | None = None
    schema: dict[str, Any] | None = None

    def check(self, text: str, truncated: bool) -> str | None:
        """Why the finished answer ``text`` fails the format (None: it is fine). ``truncated``:
        it ended at max_tokens or a full context."""
        if self.grammar is None:
            return None
        if truncated:
            return "the answer reached max_tokens (or the context's end) before its JSON was complete"
        try:
            value = json.loads(text)
        except ValueError as exc:
            return f"the answer is not valid JSON ({exc})"
        if self.schema is None and not isinstance(value, dict):  # json_object; a schema says what its root is
            return "the answer is not a JSON object"
        if self.schema is not None:
            error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(self.schema).iter_errors(value))
            if error is not None:
                return f"the answer does not match the schema: {error.message}"
        return None


TEXT = OutputFormat()


def parse_response_format(value: object, param: str = "response_format") -> OutputFormat:
    """OpenAI's ``response_format`` object (the chat API's, or the Responses API's ``text.format``,
    which carries the json_schema's fields at its top level)."""
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise BadRequest(f"'{param}' must be an object with a 'type'", param)
    kind = value["type"]
    if kind == "text":
        return TEXT
    if kind == "json_object":
        return OutputFormat(json_object_gbnf())
    if kind != "json_schema":
        raise BadRequest(f"'{param}.type' must be text, json_object or json_schema, not {kind!r}", param)
    spec = value.get("json_schema", value)  # the chat API nests it; the Responses API does not
    schema = spec.get("schema") if isinstance(spec, dict) else None
    if not isinstance(schema, dict):
        raise BadRequest(f"'{param}' json_schema needs a 'schema' object", param)
    return OutputFormat(schema_grammar(schema, param), schema)


def schema_grammar(schema: dict[str, Any], param: str) -> str:
    """GBNF for ``schema``; BadRequest naming a keyword the grammar cannot enforce, or the part of
    the schema past the grammars' bounds."""
    for keyword in _keywords(schema):
        if keyword in UNENFORCED:
            raise BadRequest(f"'{param}': the JSON schema keyword '{keyword}' is not supported", param)
    try:
        return budgeted(schema_gbnf, body_json(schema))
    except SchemaRefused as exc:
        raise BadRequest(f"'{param}': {exc}", param) from None
    except (ValueError, RecursionError) as exc:
        raise BadRequest(f"'{param}': the JSON schema is not supported: {exc}", param) from None


def _keywords(schema: object) -> Iterator[str]:
    """Every keyword used anywhere in ``schema`` (the sub-schemas of _SUBSCHEMAS walked)."""
    if not isinstance(schema, dict):
        return
    yield from (key for key in schema if isinstance(key, str))
    for key in _SUBSCHEMAS:
        sub = schema.get(key)
        if key in ("properties", "$defs") and isinstance(sub, dict):
            for child in sub.values():
                yield from _keywords(child)
        elif isinstance(sub, list):
            for child in sub:
                yield from _keywords(child)
        else:
            yield from _keywords(sub)


def truncated(stats: GenerationStats) -> bool:
    """The answer was cut by a limit, not ended by the model (its JSON may be unfinished)."""
    return stats.finish_reason in (FinishReason.LENGTH, FinishReason.CONTEXT_FULL)


def unmet_format(output: OutputFormat, finished: Finished) -> JSONResponse | None:
    """The error for a whole answer that fails its format (None: it is fine): a 400 when
    max_tokens cut it short (the client's limit), a 500 when it does not validate."""
    problem = output.check(finished.text, truncated(finished.stats))
    if problem is None:
        return None
    status = 400 if truncated(finished.stats) else 500
    kind = "invalid_request_error" if status == 400 else "server_error"
    return error(status, problem, kind, param="max_tokens" if status == 400 else None, code="response_format_unmet")
