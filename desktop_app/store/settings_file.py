"""Reading ``settings.json`` whatever it holds, and keeping a copy before it is rewritten.

Nothing in a settings file can stop the app: a file past :data:`MAX_SETTINGS_BYTES`, an integer
of thousands of digits, JSON nested a hundred thousand deep or broken JSON each give what can be
read of it (the entries before the damage) and one line saying what was wrong. The caller
(:class:`desktop_app.store.settings.Settings`) decides what to keep.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

MAX_SETTINGS_BYTES = 16 * 1024 * 1024  # far past what every setting at its longest takes
LONGEST_INT_DIGITS = 4000  # below Python's own limit for turning digits into an int (4300)


class LongNumber(str):
    """The digits of an integer too long for Python to read as one, kept as text (no setting
    accepts it, and it is written back as a string where it is kept)."""


def _integer(digits: str) -> int | str:
    return int(digits) if len(digits.lstrip("-")) <= LONGEST_INT_DIGITS else LongNumber(digits)


_DECODER = json.JSONDecoder(parse_int=_integer)


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def readable_entries(text: str) -> dict[str, Any]:
    """The top-level entries of a settings object, in order, up to the first that cannot be
    read (a trailing comma forgiven): what a damaged file still holds."""
    out: dict[str, Any] = {}
    i = _skip(text, 0)
    if not text.startswith("{", i):
        return out
    i += 1
    try:
        while True:
            i = _skip(text, i)
            if text.startswith("}", i):
                return out
            key, i = _DECODER.raw_decode(text, i)
            i = _skip(text, i)
            if not isinstance(key, str) or not text.startswith(":", i):
                return out
            value, i = _DECODER.raw_decode(text, _skip(text, i + 1))
            out[key] = value
            i = _skip(text, i)
            if not text.startswith(",", i):
                return out
            i += 1
    except (ValueError, RecursionError, MemoryError):
        return out


def parse(text: str) -> tuple[Any, str | None]:
    """The JSON in ``text`` and None; or, when it is not valid JSON, what can still be read of
    it (:func:`readable_entries`, or the whole with trailing commas forgiven) and why not."""
    try:
        return _DECODER.decode(text), None
    except json.JSONDecodeError as exc:
        why = f"it is not valid JSON ({exc.msg} at line {exc.lineno})"
    except RecursionError:
        why = "it is nested too deeply to read"
    except (ValueError, MemoryError) as exc:
        why = f"it is not valid JSON ({exc})"
    try:
        return _DECODER.decode(re.sub(r",\s*([}\]])", r"\1", text)), why
    except (ValueError, RecursionError, MemoryError):
        return readable_entries(text), why


def read(path: Path) -> str:
    """The file's text; OSError or UnicodeDecodeError when it cannot be read, ValueError when it
    is past :data:`MAX_SETTINGS_BYTES` (FileNotFoundError when there is none)."""
    size = path.stat().st_size
    if size > MAX_SETTINGS_BYTES:
        raise ValueError(
            f"it is {size / 2**20:,.1f} MB, more than a settings file holds ({MAX_SETTINGS_BYTES // 2**20} MB)"
        )
    return path.read_text(encoding="utf-8")


def copy_aside(path: Path) -> Path:
    """A byte-for-byte copy of ``path`` as ``<name>.bad-<time>``, made before the file is rewritten
    without the values it held that could not be used; when the newest such copy already holds
    these same bytes, that copy (so a file read again and again is kept once). OSError when the
    copy cannot be made."""
    data = path.read_bytes()
    copies = sorted(path.parent.glob(f"{path.name}.bad-*"), key=lambda p: p.stat().st_mtime)
    if copies and copies[-1].read_bytes() == data:
        return copies[-1]
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.bad-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.bad-{stamp}-{n}")
    shutil.copy2(path, target)
    return target
