"""Reading a conversation export (:mod:`desktop_app.store.export`) back, all or nothing.

The file is read and checked whole before anything is written: its size first, then its JSON,
then every message; a file that fails any check is refused with one line that says why, and
the history is not touched. One that passes is written in one transaction
(:meth:`History.add_conversation`). The limits below are the only ones, and are what
``docs/architecture.md`` (Data safety) lists. Meant to run on a background thread: nothing
here touches the window, and :func:`read_conversation` reports its progress.
"""

from __future__ import annotations

import json
import math
import typing
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from desktop_app.documents.attachment import Attachment
from desktop_app.engine.stats import GenerationStats
from desktop_app.store.attachment_transfer import files_from_json
from desktop_app.store.errors import StoreError
from desktop_app.store.history import MAX_TITLE_CHARS, Conversation, History
from desktop_app.store.settings import MAX_TEXT_CHARS

FORMAT = "specchat-conversation"
VERSION = 1
OPTIONS = ("system_prompt", "think")  # the per-conversation options an export carries
ROLES = ("system", "user", "assistant")

MAX_IMPORT_BYTES = 32_000_000  # the whole file
MAX_MESSAGES = 10_000  # messages in one conversation
MAX_MESSAGE_CHARS = 1_000_000  # one message's text (about 250k tokens: more than a context holds)
MAX_STATS_CHARS = 65_536  # one message's generation stats, as JSON

Progress = Callable[[int, int], None]  # messages checked so far, of how many
StatsCheck = Callable[[dict[str, Any]], object]  # raises when the window could not show these stats


class ConversationFileError(StoreError):
    """A file that cannot be imported as a conversation; the message says why."""


@dataclass(frozen=True)
class ImportedConversation:
    """A checked export, ready to be written."""

    title: str
    options: dict[str, Any]
    messages: list[tuple[str, str, dict[str, Any] | None]]
    files: dict[int, list[Attachment]] = field(default_factory=dict)  # by message index: its attachments


def _number_kinds() -> dict[str, tuple[type, ...]]:
    """The JSON types each stats field the window reads may have (from GenerationStats' fields)."""
    hints = typing.get_type_hints(GenerationStats)
    kinds: dict[str, tuple[type, ...]] = {}
    for f in fields(GenerationStats):
        hint = hints[f.name]
        origin = typing.get_origin(hint) or hint
        if hint in (int, float):  # counts read as numbers (a float count shows as 0)
            kinds[f.name] = (int, float)
        elif origin in (list, dict):
            kinds[f.name] = (origin,)
        else:  # str, a Word enum, or one of them or None: written as its text
            kinds[f.name] = (str, type(None)) if type(None) in typing.get_args(hint) else (str,)
    for derived in ("acceptance_rate", "tokens_per_pass", "decode_tokens_per_s", "measured_speedup"):
        kinds[derived] = (int, float)
    return kinds


STATS_KINDS = _number_kinds()


def _stats_problem(stats: dict[str, Any]) -> str | None:
    """Why the window could not show these stats under an answer; None when it can."""
    for key, value in stats.items():
        kinds = STATS_KINDS.get(key)
        if kinds is None:
            continue  # a field of a later version: kept, not read
        if isinstance(value, bool) or not isinstance(value, kinds):
            return f'"{key}" is {type(value).__name__}, not {" or ".join(k.__name__ for k in kinds)}'
        if isinstance(value, float) and not math.isfinite(value):
            return f'"{key}" is not a finite number'
    pairs = stats.get("by_drafter", {})
    for kind, pair in pairs.items():
        if not (isinstance(pair, list) and len(pair) == 2 and all(type(n) is int for n in pair)):
            return f'"by_drafter" of {kind!r} is not a pair of counts'
    return None


def _text(value: str, what: str, limit: int) -> str:
    """``value`` when it is at most ``limit`` characters and valid Unicode text."""
    if len(value) > limit:
        raise ConversationFileError(f"{what} is {len(value):,} characters long; the most is {limit:,}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ConversationFileError(f"{what} is not valid text (it holds a lone surrogate, \\ud800-\\udfff)") from None
    return value


def _stats(stats: Any, number: int, check: StatsCheck | None) -> dict[str, Any] | None:
    where = f"message {number}'s stats"
    if stats is None:
        return None
    if not isinstance(stats, dict):
        raise ConversationFileError(f"{where} are {type(stats).__name__}, not an object or null")
    try:
        _text(json.dumps(stats, ensure_ascii=False), where, MAX_STATS_CHARS)
    except (TypeError, ValueError) as exc:
        raise ConversationFileError(f"{where} cannot be stored: {exc}") from exc
    problem = _stats_problem(stats)
    if problem is None and check is not None:
        try:
            check(stats)
        except Exception as exc:  # noqa: BLE001 - whatever the window's own code would fail with
            problem = f"the window cannot show them ({type(exc).__name__}: {exc})"
    if problem:
        raise ConversationFileError(f"{where} cannot be shown: {problem}")
    return stats


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def _load(path: Path) -> Any:
    name = path.name
    try:
        size = path.stat().st_size
        if size > MAX_IMPORT_BYTES:
            raise ConversationFileError(
                f"{name} is {size / 1e6:,.1f} MB; a conversation file may hold {MAX_IMPORT_BYTES / 1e6:g} MB at most"
            )
        raw = path.read_bytes()[: MAX_IMPORT_BYTES + 1]
    except OSError as exc:
        raise ConversationFileError(f"{name} could not be read: {exc.strerror or exc}") from exc
    if len(raw) > MAX_IMPORT_BYTES:  # grew since it was measured
        raise ConversationFileError(f"{name} holds more than {MAX_IMPORT_BYTES / 1e6:g} MB")
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except UnicodeDecodeError as exc:
        raise ConversationFileError(f"{name} is not a SpecChat conversation (not UTF-8 text: {exc.reason})") from exc
    except RecursionError:
        raise ConversationFileError(f"{name} is not a SpecChat conversation (its JSON is nested too deeply)") from None
    except MemoryError:
        raise ConversationFileError(f"{name} could not be read: not enough memory") from None
    except ValueError as exc:  # JSONDecodeError, NaN or Infinity, an integer past Python's digit limit
        raise ConversationFileError(f"{name} is not a SpecChat conversation (not valid JSON: {exc})") from exc


def checked(
    data: Any, name: str, progress: Progress | None = None, check: StatsCheck | None = None
) -> ImportedConversation:
    """The conversation in a parsed export, or ConversationFileError saying what is wrong."""
    bad = f"{name} is not a SpecChat conversation"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConversationFileError(f'{bad} (it has no "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        version = data.get("version")
        shown = repr(version) if isinstance(version, (int, float, str)) and len(str(version)) < 40 else "another"
        raise ConversationFileError(f"{name} is a SpecChat conversation of version {shown}, not {VERSION}")
    title, options, messages = data.get("title"), data.get("options", {}), data.get("messages")
    if not isinstance(title, str) or not isinstance(options, dict) or not isinstance(messages, list):
        raise ConversationFileError(f"{bad}: it needs a title, options and a list of messages")
    title = _text(title, f"{name}'s title", MAX_TITLE_CHARS).strip() or "Imported chat"
    if len(messages) > MAX_MESSAGES:
        raise ConversationFileError(
            f"{name} holds {len(messages):,} messages; a conversation may hold {MAX_MESSAGES:,} at most"
        )
    kept = {key: options[key] for key in OPTIONS if options.get(key) is not None}
    if not isinstance(kept.get("system_prompt", ""), str) or not isinstance(kept.get("think", False), bool):
        raise ConversationFileError(f"{bad}: its system prompt must be a text and its think option true or false")
    if "system_prompt" in kept:
        _text(kept["system_prompt"], f"{name}'s system prompt", MAX_TEXT_CHARS)
    out: list[tuple[str, str, dict[str, Any] | None]] = []
    files: dict[int, list[Attachment]] = {}
    for number, message in enumerate(messages, 1):
        if not isinstance(message, dict):
            raise ConversationFileError(f"{bad}: message {number} is not an object")
        role, content = message.get("role"), message.get("content")
        if role not in ROLES or not isinstance(content, str):
            raise ConversationFileError(
                f"{bad}: message {number} needs a role ({', '.join(ROLES)}), a text content and stats or null"
            )
        _text(content, f"message {number}", MAX_MESSAGE_CHARS)
        out.append((role, content, _stats(message.get("stats"), number, check)))
        if message.get("attachments"):
            try:
                files[number - 1] = files_from_json(message["attachments"], number, MAX_MESSAGE_CHARS)
            except StoreError as exc:
                raise ConversationFileError(str(exc)) from None
        if progress is not None and number % 500 == 0:
            progress(number, len(messages))
    return ImportedConversation(title, kept, out, files)


def read_conversation(
    path: Path, progress: Progress | None = None, check: StatsCheck | None = None
) -> ImportedConversation:
    """The checked conversation in an export file; ConversationFileError when it cannot be
    read, is not one, or passes a limit. ``check`` is the window's own test that it can show a
    message's stats (it raises when it cannot)."""
    try:
        return checked(_load(path), path.name, progress, check)
    except ConversationFileError as exc:
        if str(exc).startswith(path.name):
            raise
        raise ConversationFileError(f"{path.name}: {exc}") from None  # a message's fault, named with the file


def write_conversation(history: History, conv: ImportedConversation) -> Conversation:
    """A new conversation from a checked export: its messages and options in one transaction,
    then their files (the conversation is deleted again when they cannot be written)."""
    new = history.add_conversation(conv.title, conv.messages, conv.options)
    if conv.files:
        try:
            ids = [m.id for m in history.messages(new.id)]
            for index, files in conv.files.items():
                history.attachments.add(ids[index], files)
        except BaseException:
            history.delete(new.id)
            raise
    return new
