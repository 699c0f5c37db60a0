"""The JSON types of a request body's fields, declared once per endpoint and checked before any
parsing, so that a list or an object where a string is expected (``"type": ["text"]``) is a 400
naming the field, never a TypeError deep in a parser (a 500).

A declaration maps a field's path to the JSON types it may have: ``"messages.*.content.*.type"``
(``*``: every item of a list). Only declared paths are looked at, and only under declared
parents: what a client owns (a tool's ``input_schema``, ``metadata``, a call's ``input``) is not
walked. ``null`` anywhere means absent (each parser treats it so). The walk is linear in the
body. Values (one of a set, a range) stay the parsers' to check: this is about types only.

:data:`SHARED_TYPES` are the top-level fields several endpoints take (``stream``, the sampling
numbers, the answer's length...): every endpoint checks them with :data:`SHARED` (or a
declaration that includes them) before anything else, so the same wrong value gets the same 400
with the same message wherever it is sent. A number no parameter can take (too long, not
finite: :class:`~desktop_app.server.request_body.BadNumber`) is refused naming its field too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from desktop_app.server.errors import BadRequest
from desktop_app.server.request_body import BadNumber

Kinds = tuple[type, ...]
STR: Kinds = (str,)
LIST: Kinds = (list,)
OBJ: Kinds = (dict,)
BOOL: Kinds = (bool,)
INT: Kinds = (int,)
NUMBER: Kinds = (int, float)
STR_OR_LIST: Kinds = (str, list)
STR_OR_OBJ: Kinds = (str, dict)
_NAMES = {str: "a string", list: "a list", dict: "an object", bool: "a boolean", int: "an integer", float: "a number"}


class BodyTypes:
    """One endpoint's declared types; :meth:`check` raises BadRequest naming the first field whose
    value has another type (``param``: the body's top-level field, for OpenAI's error object)."""

    def __init__(self, declared: Mapping[str, Kinds]) -> None:
        self._kinds = {tuple(path.split(".")): kinds for path, kinds in declared.items()}
        # A value is walked into only when some declared path goes deeper under it.
        self._parents = {key[:n] for key in self._kinds for n in range(1, len(key))}

    def check(self, body: dict[str, Any]) -> None:
        kinds_of, parents = self._kinds, self._parents
        # (pattern, value, trail): a trail is (parent's trail, key), joined into a path only for an error
        stack: list[tuple[tuple[str, ...], Any, Any]] = [((name,), value, (None, name)) for name, value in body.items()]
        while stack:
            pattern, value, trail = stack.pop()
            if value is None:
                continue
            kinds = kinds_of.get(pattern)
            if kinds is not None and isinstance(value, BadNumber):  # too long or not finite, whatever the type
                where = _path(trail)
                raise BadRequest(value.message(".".join(where)), where[0])
            if kinds is not None and (not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds)):
                where = _path(trail)
                raise BadRequest(f"{'.'.join(where)}: must be {_kinds_text(kinds)}, not {_type_text(value)}", where[0])
            if pattern not in parents:
                continue
            if isinstance(value, list):
                item = (*pattern, "*")
                stack.extend((item, v, (trail, i)) for i, v in enumerate(value))
            elif isinstance(value, dict):
                for key, v in value.items():
                    child = (*pattern, key)
                    if child in kinds_of or child in parents:
                        stack.append((child, v, (trail, key)))


def _path(trail: Any) -> list[str]:
    out: list[str] = []
    while trail is not None:
        trail, key = trail
        out.append(str(key))
    return out[::-1]


def _kinds_text(kinds: Kinds) -> str:
    if kinds == NUMBER:
        return "a number"
    return " or ".join(_NAMES.get(k, k.__name__) for k in kinds)


def _type_text(value: object) -> str:
    return _NAMES.get(type(value), type(value).__name__)


# The top-level fields more than one endpoint takes, with the one type each has everywhere.
SHARED_TYPES: dict[str, Kinds] = {
    "model": STR,
    "stream": BOOL,
    "temperature": NUMBER,
    "top_p": NUMBER,
    "top_k": INT,
    "min_p": NUMBER,
    "repeat_penalty": NUMBER,
    "repeat_last_n": INT,
    "seed": INT,
    "max_tokens": INT,
    "max_completion_tokens": INT,
    "max_output_tokens": INT,
    "n_predict": INT,
    "metadata": OBJ,
    "user": STR,
    "speculation": STR,
    "drafter": STR,
    "stream_options": OBJ,
    "stream_options.include_usage": BOOL,
    "parallel_tool_calls": BOOL,
    # accepted at their neutral value only (request_fields.NEUTRAL): still a number or a switch
    "n": INT,
    "best_of": INT,
    "frequency_penalty": NUMBER,
    "presence_penalty": NUMBER,
    "typical_p": NUMBER,
    "dynatemp_range": NUMBER,
    "mirostat": INT,
    "dry_multiplier": NUMBER,
    "xtc_probability": NUMBER,
    "top_n_sigma": NUMBER,
    "n_probs": INT,
    "ignore_eos": BOOL,
    "echo": BOOL,
    "top_logprobs": INT,
    "background": BOOL,
}
SHARED = BodyTypes(SHARED_TYPES)


# Blocks of text inside a turn, a system prompt or a tool's result (Anthropic's), and their parts.
_ANTHROPIC_BLOCK = {
    "type": STR,
    "text": STR,
    "id": STR,
    "name": STR,
    "input": OBJ,
    "tool_use_id": STR,
    "content": STR_OR_LIST,
    "content.*": OBJ,
    "content.*.type": STR,
    "content.*.text": STR,
    "is_error": BOOL,
    "thinking": STR,
    "signature": STR,
    "data": STR,
}

ANTHROPIC_MESSAGES = BodyTypes(
    {
        **SHARED_TYPES,
        "system": STR_OR_LIST,
        "system.*": OBJ,
        "system.*.type": STR,
        "system.*.text": STR,
        "messages": LIST,
        "messages.*": OBJ,
        "messages.*.role": STR,
        "messages.*.content": STR_OR_LIST,
        "messages.*.content.*": OBJ,
        **{f"messages.*.content.*.{path}": kinds for path, kinds in _ANTHROPIC_BLOCK.items()},
        "stop_sequences": LIST,
        "stop_sequences.*": STR,
        "tools": LIST,
        "tools.*": OBJ,
        "tools.*.type": STR,
        "tools.*.name": STR,
        "tools.*.description": STR,
        "tools.*.input_schema": OBJ,
        "tool_choice": OBJ,
        "tool_choice.type": STR,
        "tool_choice.name": STR,
        "tool_choice.disable_parallel_tool_use": BOOL,
        "thinking": OBJ,
        "thinking.type": STR,
        "thinking.display": STR,
        "output_config": OBJ,
        "output_config.effort": STR,
    }
)

RESPONSES = BodyTypes(
    {
        **SHARED_TYPES,
        "instructions": STR,
        "input": STR_OR_LIST,
        "input.*": OBJ,
        "input.*.type": STR,
        "input.*.role": STR,
        "input.*.content": STR_OR_LIST,
        "input.*.content.*": OBJ,
        "input.*.content.*.type": STR,
        "input.*.content.*.text": STR,
        "input.*.id": STR,
        "input.*.status": STR,
        "input.*.call_id": STR,
        "input.*.name": STR,
        "input.*.arguments": STR,
        "reasoning": OBJ,
        "reasoning.effort": STR,
        "reasoning.summary": STR,
        "tools": LIST,
        "tools.*": OBJ,
        "tools.*.type": STR,
        "tools.*.name": STR,
        "tools.*.description": STR,
        "tools.*.parameters": OBJ,
        "tools.*.strict": BOOL,
        "tool_choice": STR_OR_OBJ,
        "tool_choice.type": STR,
        "tool_choice.name": STR,
        "text": OBJ,
        "text.format": OBJ,
        "text.format.type": STR,
        "text.format.name": STR,
        "text.format.description": STR,
        "text.format.schema": OBJ,
        "text.format.strict": BOOL,
        "text.verbosity": STR,
    }
)
