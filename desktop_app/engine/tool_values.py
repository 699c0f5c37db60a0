"""Gemma 4's tool-call values: ``{key:<|"|>text<|"|>,n:3,ok:true,xs:[1,2],o:{k:<|"|>v<|"|>}}``.

Its chat template writes arguments this way (``format_argument``): strings between ``<|"|>``
quote tokens, taken literally (no escapes); keys bare; numbers, booleans and null as in JSON; and
the model answers in kind. JSON's own quoted strings are read too (models sometimes write them).
"""

from __future__ import annotations

import json
import re
from typing import Any

QUOTE = '<|"|>'
_BARE = re.compile(r"[^,:{}\[\]\s]+")
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}
_DECODER = json.JSONDecoder()


def gemma_value(text: str, i: int) -> tuple[Any, int]:
    """The value at ``text[i:]`` and where it ends; ValueError when it is incomplete or malformed."""
    i = _space(text, i)
    if text.startswith(QUOTE, i):
        end = text.find(QUOTE, i + len(QUOTE))
        if end < 0:
            raise ValueError("an unterminated string")
        return text[i + len(QUOTE) : end], end + len(QUOTE)
    if text.startswith('"', i):
        try:
            return _DECODER.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise ValueError(str(exc)) from None
    if text.startswith("{", i):
        return _object(text, i + 1)
    if text.startswith("[", i):
        return _array(text, i + 1)
    bare = _BARE.match(text, i)
    if bare is None:
        raise ValueError(f"no value at {i}")
    word = bare.group(0)
    if word in _LITERALS:
        return _LITERALS[word], bare.end()
    try:
        return json.loads(word), bare.end()
    except json.JSONDecodeError:
        raise ValueError(f"not a value: {word!r}") from None


def _space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _object(text: str, i: int) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    i = _space(text, i)
    if text.startswith("}", i):
        return out, i + 1
    while True:
        i = _space(text, i)
        if text.startswith(QUOTE, i) or text.startswith('"', i):
            key, i = gemma_value(text, i)
        else:
            bare = _BARE.match(text, i)
            if bare is None:
                raise ValueError(f"no key at {i}")
            key, i = bare.group(0), bare.end()
        i = _space(text, i)
        if not text.startswith(":", i):
            raise ValueError(f"no ':' after the key {key!r}")
        out[str(key)], i = gemma_value(text, i + 1)
        i = _space(text, i)
        if text.startswith(",", i):
            i += 1
        elif text.startswith("}", i):
            return out, i + 1
        else:
            raise ValueError("an unterminated object")


def _array(text: str, i: int) -> tuple[list[Any], int]:
    out: list[Any] = []
    i = _space(text, i)
    if text.startswith("]", i):
        return out, i + 1
    while True:
        value, i = gemma_value(text, i)
        out.append(value)
        i = _space(text, i)
        if text.startswith(",", i):
            i += 1
        elif text.startswith("]", i):
            return out, i + 1
        else:
            raise ValueError("an unterminated list")
