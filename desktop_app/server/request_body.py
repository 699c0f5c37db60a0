"""The one place a request body is read and parsed, with every bound checked before any work.

In order: the declared length (413 before reading a byte), the bytes as they arrive (413 the
moment they pass the limit: an endless body is never buffered), a deadline for the whole body
(408: a body that never completes is a slowloris), UTF-8, the nesting depth (counted without
recursion, before the parser recurses), then ``json.loads`` with number hooks: a number longer
than any real parameter, or one that is not finite, becomes a :class:`BadNumber` that the schema
refuses naming its field (never Python's int-parsing limit or an OverflowError further on).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import re
from dataclasses import dataclass

from starlette.requests import ClientDisconnect, Request

from desktop_app.server.errors import ApiError
from desktop_app.server.limits import ServerLimits

# A JSON string, escapes included, as the unrolled loop the regex engine runs without backtracking.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
FINITE = "must be a finite number"  # the engine's ranges say the same (desktop_app/engine/ranges.py)
_CLOSE = {"Connection": "close"}  # the rest of a refused body is not read: the connection ends with the answer


class ClientGone(Exception):
    """The client disconnected before its body arrived; nobody is left to answer."""


@dataclass(frozen=True)
class BadNumber:
    """A number in the body that no parameter can take; the schema says which field held it."""

    text: str
    rule: str  # what the number breaks, e.g. "must be a finite number"

    def message(self, name: str) -> str:
        shown = self.text if len(self.text) <= 24 else f"{self.text[:12]}... ({len(self.text)} characters)"
        return f"{name} {self.rule}, not {shown}"


def body_json(value: object, **options: object) -> str:
    """``json.dumps`` for anything taken from a body: a :class:`BadNumber` inside (a number no
    parameter takes, where any JSON may stand: a tool's input, a schema, a wrong value) is
    written as its text in quotes, never a TypeError."""
    return json.dumps(value, default=_written, **options)  # type: ignore[arg-type]


def shown(value: object, limit: int = 40) -> str:
    """A body value as an error message quotes it: JSON, cut to ``limit`` characters."""
    text = body_json(value, ensure_ascii=False)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _written(value: object) -> str:
    if isinstance(value, BadNumber):
        return value.text
    raise TypeError(f"{type(value).__name__} is not JSON")


async def read_json(request: Request, limits: ServerLimits) -> object:
    """The request's JSON body; ApiError (400, 408, 413) when it breaks a bound, ClientGone when
    the client left during the upload."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limits.max_body_bytes:
        raise _too_large(limits.max_body_bytes)
    try:
        raw = await asyncio.wait_for(_read(request, limits.max_body_bytes), limits.body_timeout_s)
    except TimeoutError:
        raise ApiError(
            408,
            f"the request body did not arrive within {limits.body_timeout_s:g} s",
            code="request_timeout",
            headers=_CLOSE,
        ) from None
    except ClientDisconnect:
        raise ClientGone() from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(400, f"the request body is not valid UTF-8 (byte {exc.start})") from None
    depth = nesting_depth(text)
    if depth > limits.max_depth:
        raise ApiError(400, f"the request body is nested {depth} levels deep; at most {limits.max_depth} are accepted")
    return parse_json(text, limits.max_number_chars)


async def _read(request: Request, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(limit: int) -> ApiError:
    return ApiError(
        413, f"the request body is larger than {limit / 2**20:g} MiB", code="request_too_large", headers=_CLOSE
    )


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting outside strings; linear, no recursion. A body that is not JSON
    may count wrong here; the parser then says what is wrong with it."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(itertools.accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)


def parse_json(text: str, max_number_chars: int) -> object:
    too_long = f"must be a number of at most {max_number_chars} characters"

    def integer(digits: str) -> int | BadNumber:
        return BadNumber(digits, too_long) if len(digits) > max_number_chars else int(digits)

    def real(digits: str) -> float | BadNumber:
        if len(digits) > max_number_chars:
            return BadNumber(digits, too_long)
        value = float(digits)  # 1e999 is short but infinite
        return value if math.isfinite(value) else BadNumber(digits, FINITE)

    def constant(name: str) -> BadNumber:  # NaN, Infinity, -Infinity: not JSON, but Python's parser takes them
        return BadNumber(name, FINITE)

    try:
        return json.loads(text, parse_int=integer, parse_float=real, parse_constant=constant)
    except json.JSONDecodeError as exc:
        raise ApiError(400, f"the request body is not valid JSON: {exc}") from None
