"""Where the API key comes from, in one order for ``specchat serve`` and the window.

A key on the command line is visible to every local user (``ps``, ``/proc/PID/cmdline``); a
file or the environment is not. The first that is given wins: ``--api-key-file``, ``--api-key``
(or the window's ``api_key`` setting), then :data:`KEY_ENV`. A key source that is given but
unusable (missing, unreadable or empty file; empty variable) is an error, never "no key": the
user asked for a key, so serving without one would be the worse surprise.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

KEY_ENV = "SPECCHAT_API_KEY"
MAX_KEY_FILE_BYTES = 4096  # a key is a line; a bigger file is the wrong file


class ApiKeyError(ValueError):
    """A key source that cannot be used; the message is one line for the user."""


def resolve_api_key(
    key: str | None = None, key_file: Path | None = None, environ: Mapping[str, str] = os.environ
) -> str | None:
    """The key to require, or None for none (see the module's docstring for the order)."""
    if key_file is not None:
        return _usable(read_key_file(key_file), f"the API key file {key_file}")
    if key is not None:
        if not key.strip():
            raise ApiKeyError("the API key is empty")
        return _usable(key, "the API key")
    if KEY_ENV in environ:
        value = environ[KEY_ENV].strip()
        if not value:
            raise ApiKeyError(f"{KEY_ENV} is set but empty; unset it to serve without a key")
        return _usable(value, KEY_ENV)
    return None


def _usable(key: str, source: str) -> str:
    # Clients send it in an HTTP header, which carries printable ASCII only.
    if not (key.isascii() and key.isprintable()):
        raise ApiKeyError(f"{source}: the key must be printable ASCII (clients send it in an HTTP header)")
    return key


def read_key_file(path: Path) -> str:
    """The key in ``path``: its one line, surrounding whitespace removed."""
    try:
        with path.open("rb") as f:
            data = f.read(MAX_KEY_FILE_BYTES + 1)
    except OSError as exc:
        raise ApiKeyError(f"cannot read the API key file {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_KEY_FILE_BYTES:
        raise ApiKeyError(f"the API key file {path} is larger than {MAX_KEY_FILE_BYTES} bytes; it should hold one line")
    try:
        key = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ApiKeyError(f"the API key file {path} is not text") from None
    if not key:
        raise ApiKeyError(f"the API key file {path} is empty")
    if "\n" in key or "\r" in key:
        raise ApiKeyError(f"the API key file {path} holds more than one line; it should hold only the key")
    return key


def readable_by_others(path: Path) -> bool:
    """Whether other local users may read the key file (worth a warning, as ssh gives)."""
    try:
        return bool(path.stat().st_mode & (stat.S_IRGRP | stat.S_IROTH)) and os.name == "posix"
    except OSError:
        return False
