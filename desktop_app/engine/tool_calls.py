"""Tool calls in a model's answer: which family's syntax a chat template teaches, and the calls
(name, JSON arguments) and the plain answer that a text written in it holds. Llama-free and
Qt-free, like :mod:`~desktop_app.engine.reasoning`: the engine detects the family when a target
loads, the API parses answers (whole, or streamed as they grow).

The families and their syntax, as llama.cpp's ``common/chat.cpp`` parses them:

- ``hermes`` (Hermes 2/3, Qwen 2.5/3): ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``,
  one block per call, after any text;
- ``llama3`` (Llama 3.1-3.3): the answer is ``{"name": ..., "parameters": {...}}`` (optionally
  after ``<|python_tag|>``; calls separated by ``;``), or a built-in tool's
  ``<|python_tag|>brave_search.call(query="...")``;
- ``mistral``: ``[TOOL_CALLS][{"name", "arguments", "id"}, ...]`` (Nemo), or
  ``[TOOL_CALLS]name[ARGS]{...}`` per call (Magistral, Devstral, Mistral Small 3.2+);
- ``gemma4``: ``<|tool_call>call:name{key:<|"|>text<|"|>,n:3}<tool_call|>``, Gemma's own values;
- ``gpt-oss`` (harmony): ``<|channel|>commentary to=functions.name <|constrain|>json<|message|>{...}``
  (or the recipient in the role, ``<|start|>assistant to=functions.name<|channel|>...``);
- ``generic`` (llama.cpp's fallback for a template that teaches none of these): the answer is
  JSON, ``{"tool_call": {"name": ..., "arguments": {...}}}``, ``{"tool_calls": [...]}`` or
  ``{"response": "..."}`` (its text); any other answer is plain text.

A call that does not parse leaves the whole text as the answer (as llama.cpp falls back to
content). While an answer streams (``partial``), the start of a call still arriving is held back
from the answer, and a call whose arguments are not complete is given by its name alone.
"""

from __future__ import annotations

import json
import re
import secrets
import string
from dataclasses import dataclass
from typing import Any

from desktop_app.engine.tool_values import gemma_value


@dataclass(frozen=True)
class ToolFormat:
    """A family's tool-call syntax: ``detect`` in a template's source names it; ``opens``: the
    texts that open a call; ``markers``: the special tokens the engine must show as text;
    ``trigger``: a regular expression found in an answer where a call begins (its first group,
    else the whole match, starts the text the call grammar of ``tool_choice`` "auto" takes over
    from, as llama.cpp's lazy grammar's triggers)."""

    name: str
    detect: str
    opens: tuple[str, ...]
    markers: tuple[str, ...]
    trigger: str
    short_ids: bool = False  # call ids of 9 letters and digits (Mistral's templates require them)

    def new_call_id(self) -> str:
        if self.short_ids:
            return "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(9))
        return "call_" + secrets.token_hex(12)


HERMES = ToolFormat("hermes", "<tool_call>", ("<tool_call>",), ("<tool_call>", "</tool_call>"), "<tool_call>")
# Llama 3.x: a call is the whole answer (after whitespace and an optional <|python_tag|>).
LLAMA3 = ToolFormat(
    "llama3",
    "<|start_header_id|>ipython<|end_header_id|>",
    ("<|python_tag|>", "{"),
    ("<|python_tag|>",),
    r'^\s*(?:<\|python_tag\|>)?\s*(\{\s*"name")',
)
MISTRAL = ToolFormat(
    "mistral", "[TOOL_CALLS]", ("[TOOL_CALLS]",), ("[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"), r"\[TOOL_CALLS\]", True
)
GEMMA4 = ToolFormat(
    "gemma4", "<|tool_call>", ("<|tool_call>",), ("<|tool_call>", "<tool_call|>", '<|"|>'), r"<\|tool_call>"
)
GPT_OSS = ToolFormat(
    "gpt-oss",
    "<|channel|>",
    ("<|start|>", "<|channel|>", " to="),
    ("<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|call|>", "<|end|>"),
    r"<\|channel\|>commentary to=",
)
# In the order they are looked for (llama.cpp's): a template may name another family's marker.
TOOL_FORMATS: tuple[ToolFormat, ...] = (GPT_OSS, GEMMA4, HERMES, LLAMA3, MISTRAL)
# A template that teaches none of them: the tools are described in its system turn and the answer
# is JSON (no template names it: it is what :func:`tool_format_named` leaves).
GENERIC = ToolFormat("generic", "", ("{",), (), r'^\s*(\{\s*"tool_calls?")')


def tool_format_called(name: str) -> ToolFormat:
    """The format whose :attr:`ToolFormat.name` is ``name``."""
    return next(fmt for fmt in (*TOOL_FORMATS, GENERIC) if fmt.name == name)


def tool_format_named(source: str) -> ToolFormat | None:
    """The family whose marker a chat template's source writes (None: none we parse)."""
    return next((fmt for fmt in TOOL_FORMATS if fmt.detect in source), None)


@dataclass(frozen=True)
class ParsedCall:
    """One call: its function, its arguments as JSON text (None: still being written), and the id
    the model gave it (Mistral's; None: the API gives one)."""

    name: str
    arguments: str | None
    id: str | None = None


@dataclass(frozen=True)
class ParsedAnswer:
    """An answer's plain text and the calls it makes."""

    content: str
    calls: tuple[ParsedCall, ...] = ()


class _Malformed(Exception):
    """The text opens a call that does not parse."""


_DECODER = json.JSONDecoder()
_NAME = re.compile(r'"name"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _skip(text: str, i: int, chars: str = " \t\r\n") -> int:
    while i < len(text) and text[i] in chars:
        i += 1
    return i


def _json_at(text: str, i: int) -> tuple[Any, int] | None:
    """The JSON value at ``text[i:]`` (after whitespace) and where it ends; None when it is
    incomplete or not JSON."""
    try:
        return _DECODER.raw_decode(text, _skip(text, i))
    except json.JSONDecodeError:
        return None


def _arguments(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value if value is not None else {}, ensure_ascii=False)


def _held_back(text: str, opens: tuple[str, ...]) -> int:
    """How many characters at the end of ``text`` may be the start of an opener."""
    return max((n for o in opens for n in range(min(len(o) - 1, len(text)), 0, -1) if text.endswith(o[:n])), default=0)


def _pending(text: str, partial: bool, found: list[ParsedCall], name: str | None = None) -> list[ParsedCall]:
    """The calls so far while a call is still being written; _Malformed on a finished text."""
    if not partial:
        raise _Malformed()
    if name is None:
        match = _NAME.search(text)
        name = json.loads(f'"{match.group(1)}"') if match else None
    return [*found, ParsedCall(name, None)] if name else found


def _hermes(text: str, partial: bool) -> tuple[str, list[ParsedCall]]:
    calls: list[ParsedCall] = []
    content, pos = [], 0
    while (start := text.find("<tool_call>", pos)) >= 0:
        content.append(text[pos:start])
        got = _json_at(text, start + len("<tool_call>"))
        if got is None or not isinstance(got[0], dict) or not isinstance(got[0].get("name"), str):
            return "".join(content), _pending(text[start:], partial, calls)
        call, end = got
        calls.append(ParsedCall(call["name"], _arguments(call.get("arguments"))))
        end = _skip(text, end)
        if text.startswith("</tool_call>", end):
            end += len("</tool_call>")
        elif partial and "</tool_call>".startswith(text[end:]):
            end = len(text)  # the closing tag still arriving
        pos = end
    content.append(text[pos:])
    return "".join(content), calls


_BUILTIN = re.compile(r"\s*(\w+)\s*\.\s*call\(")
_KEYWORD = re.compile(r"\s*(\w+)\s*=\s*")


def _llama3(text: str, partial: bool) -> tuple[str, list[ParsedCall]]:
    body = text.lstrip()
    tagged = body.startswith("<|python_tag|>")
    if tagged:
        body = body[len("<|python_tag|>") :].lstrip()
    elif partial and body and "<|python_tag|>".startswith(body):
        return "", []
    if tagged and (builtin := _BUILTIN.match(body)):
        return "", [_builtin_call(body, builtin, partial)]
    calls: list[ParsedCall] = []
    pos = 0
    while pos < len(body) and body[pos] == "{":
        got = _json_at(body, pos)
        if got is None:
            return "", _pending(body[pos:], partial, calls)
        call, end = got
        args = call.get("parameters", call.get("arguments")) if isinstance(call, dict) else None
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or args is None:
            if calls or tagged:
                raise _Malformed()
            return text, []  # a JSON answer, not a call
        calls.append(ParsedCall(call["name"], _arguments(args)))
        pos = _skip(body, end, " \t\r\n;")
    if tagged and not calls:
        raise _Malformed()
    return body[pos:] if calls else text, calls


def _builtin_call(body: str, match: re.Match[str], partial: bool) -> ParsedCall:
    """``name.call(key=value, ...)``: a Llama built-in tool (brave_search, wolfram_alpha, code_interpreter)."""
    args: dict[str, Any] = {}
    pos = match.end()
    while keyword := _KEYWORD.match(body, pos):
        got = _json_at(body, keyword.end())
        if got is None:
            return ParsedCall(match.group(1), None) if partial else _fail()
        args[keyword.group(1)], pos = got
        pos = _skip(body, pos)
        if body.startswith(",", pos):
            pos += 1
    if not body.startswith(")", _skip(body, pos)):
        return ParsedCall(match.group(1), None) if partial else _fail()
    return ParsedCall(match.group(1), json.dumps(args, ensure_ascii=False))


def _fail() -> ParsedCall:
    raise _Malformed()


_MISTRAL_CALL = re.compile(r"([^\s\[\]{}]+)\s*(?:\[CALL_ID\]\s*(\w+)\s*)?\[ARGS\]")


def _mistral(text: str, partial: bool) -> tuple[str, list[ParsedCall]]:
    start = text.find("[TOOL_CALLS]")
    if start < 0:
        return text, []
    calls: list[ParsedCall] = []
    pos = start
    while text.startswith("[TOOL_CALLS]", pos):
        pos = _skip(text, pos + len("[TOOL_CALLS]"))
        if text.startswith("[", pos):  # Nemo: a JSON array of {name, arguments, id}
            got = _json_at(text, pos)
            if got is None or not isinstance(got[0], list):
                return text[:start], _pending(text[pos:], partial, calls)
            for call in got[0]:
                if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                    raise _Malformed()
                calls.append(ParsedCall(call["name"], _arguments(call.get("arguments")), call.get("id")))
            pos = _skip(text, got[1])
            continue
        named = _MISTRAL_CALL.match(text, pos)
        if named is None:
            return text[:start], _pending("", partial, calls)
        got = _json_at(text, named.end())
        if got is None:
            return text[:start], _pending("", partial, calls, named.group(1))
        calls.append(ParsedCall(named.group(1), _arguments(got[0]), named.group(2)))
        pos = _skip(text, got[1])
    return text[:start] + text[pos:], calls


_GEMMA_CALL = re.compile(r"<\|tool_call>\s*call:\s*([^{\s]+)\s*")


def _gemma4(text: str, partial: bool) -> tuple[str, list[ParsedCall]]:
    calls: list[ParsedCall] = []
    content, pos = [], 0
    while (start := text.find("<|tool_call>", pos)) >= 0:
        content.append(text[pos:start])
        head = _GEMMA_CALL.match(text, start)
        if head is None:
            return "".join(content), _pending("", partial, calls)
        try:
            args, end = gemma_value(text, head.end())
        except ValueError:
            return "".join(content), _pending("", partial, calls, head.group(1))
        if not isinstance(args, dict):
            raise _Malformed()
        calls.append(ParsedCall(head.group(1), json.dumps(args, ensure_ascii=False)))
        end = _skip(text, end)
        if text.startswith("<tool_call|>", end):
            end += len("<tool_call|>")
        pos = end
    content.append(text[pos:])
    return "".join(content), calls


_RECIPIENT = re.compile(r"to=functions\.([^<\s]+)")
_HEADER_START = ("<|start|>assistant", "<|channel|>")


def _gpt_oss(text: str, partial: bool) -> tuple[str, list[ParsedCall]]:
    calls: list[ParsedCall] = []
    content_end = len(text)
    pos = 0
    while recipient := _RECIPIENT.search(text, pos):
        header = max(text.rfind(h, pos, recipient.start()) for h in _HEADER_START)
        content_end = min(content_end, header if header >= 0 else recipient.start())
        message = text.find("<|message|>", recipient.end())
        if message < 0:
            return text[:content_end], _pending("", partial, calls, recipient.group(1))
        got = _json_at(text, message + len("<|message|>"))
        if got is None:
            return text[:content_end], _pending("", partial, calls, recipient.group(1))
        calls.append(ParsedCall(recipient.group(1), _arguments(got[0])))
        pos = got[1]
    return text[:content_end], calls


_GENERIC_KEYS = ('"tool_call"', '"tool_calls"', '"response"')


def _generic(text: str, partial: bool) -> tuple[str, list[ParsedCall]]:
    start = _skip(text, 0)
    if not text.startswith("{", start):
        return text, []
    got = _json_at(text, start)
    if got is None:
        inner = _skip(text, start + 1)
        if partial and any(text.startswith(k, inner) or k.startswith(text[inner:]) for k in _GENERIC_KEYS):
            return "", _pending(text[start:], partial, [])  # a call or a response, still arriving
        if partial:
            return text, []  # another JSON answer, or none
        raise _Malformed()
    answer, end = got
    if not isinstance(answer, dict):
        return text, []
    if "tool_calls" in answer or "tool_call" in answer:
        items = answer.get("tool_calls", [answer.get("tool_call")])
        if not isinstance(items, list) or not items:
            raise _Malformed()
        calls = []
        for call in items:
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise _Malformed()
            calls.append(ParsedCall(call["name"], _arguments(call.get("arguments"))))
        said = answer.get("content")
        return (said if isinstance(said, str) else "") + text[_skip(text, end) :], calls
    if "response" in answer:
        response = answer["response"]
        said = response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)
        return said + text[_skip(text, end) :], []
    return text, []  # a JSON answer, not a call


_PARSERS = {
    "generic": _generic,
    "hermes": _hermes,
    "llama3": _llama3,
    "mistral": _mistral,
    "gemma4": _gemma4,
    "gpt-oss": _gpt_oss,
}


def parse_tool_calls(text: str, fmt: ToolFormat, partial: bool = False) -> ParsedAnswer:
    """The answer's text and calls in ``fmt``'s syntax. A finished text (not ``partial``) whose
    call does not parse is all answer; a partial one holds back what may open a call."""
    try:
        content, calls = _PARSERS[fmt.name](text, partial)
    except _Malformed:
        return ParsedAnswer(text)
    if partial:
        content = content[: len(content) - _held_back(content, fmt.opens)]
    return ParsedAnswer(content.strip() if calls else content, tuple(calls))
