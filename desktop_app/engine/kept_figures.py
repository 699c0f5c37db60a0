"""A small JSON file of figures measured on this machine, kept for the next process.

The thread counts (:mod:`desktop_app.engine.llama.thread_memory`) and Auto's costs
(:mod:`desktop_app.engine.auto.cost_memory`) are each one of these: entries under a key, each
with the time it was written (``at``), at most ``MAX_ENTRIES`` of them (the oldest go first).
The file is written atomically (a temporary file renamed over it) and merged with what other
processes wrote meanwhile. A damaged or unreadable file, or a data folder that cannot be
written, is said in one line (logging) and otherwise ignored: the caller then measures, as it
always could. No llama.cpp here, no Qt.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

MAX_ENTRIES = 256  # figures kept; the oldest go first
MAX_FILE_BYTES = 1 << 20  # a file larger than this is not ours (256 entries take well under it)

Entry = dict[str, Any]


class KeptFigures:
    """One file of figures: ``what`` names them in messages ("thread counts"), ``section`` is the
    file's key that holds them, ``valid`` says whether one entry is well formed (``at`` is
    checked here). ``path`` is called on first use: the data folder may be missing or read-only
    (said once, then the file is off and the caller measures in each process)."""

    def __init__(
        self, path: Callable[[], Path], what: str, section: str, version: int, valid: Callable[[Entry], bool]
    ) -> None:
        self._path_of = path
        self.what = what
        self._section = section
        self._version = version
        self._valid = valid
        self._path: Path | None = None
        self._entries: dict[str, Entry] | None = None  # None: not read yet
        self._broken = False  # the folder cannot be written: said once, not tried again
        self._damage_said = False  # a damaged file is said once (it is read again before a write)

    def get(self, key: str) -> Entry | None:
        return self._read().get(key)

    def entries(self) -> dict[str, Entry]:
        """Every entry, as the file holds them now (another process may have written since)."""
        self._entries = None
        return dict(self._read())

    def put(self, key: str, entry: Entry) -> None:
        """Write ``entry`` (stamped with the time) under ``key``, merged with the file as it is now."""
        self._entries = None  # another process may have written since: merge with what is there now
        entries = self._read()
        entries[key] = {**entry, "at": time.time()}
        for old in sorted(entries, key=lambda k: entries[k]["at"])[: max(0, len(entries) - MAX_ENTRIES)]:
            del entries[old]
        self._write(entries)

    def _file(self) -> Path | None:
        if self._path is None and not self._broken:
            try:
                self._path = self._path_of()
            except OSError as exc:
                self._off(f"cannot use the data folder ({exc})")
        return self._path

    def _off(self, why: str) -> None:
        log.warning("specchat: %s are measured again in each process: %s", self.what, why)
        self._broken = True

    def _read(self) -> dict[str, Entry]:
        if self._entries is None:
            self._entries = {}
            path = self._file()
            if path is None:
                return self._entries
            try:
                self._entries = self._load(path)
            except _Damaged as exc:
                if not self._damage_said:
                    log.warning("specchat: ignoring the remembered %s in %s: %s", self.what, path, exc)
                self._damage_said = True
        return self._entries

    def _write(self, entries: dict[str, Entry]) -> None:
        path = self._file()
        if path is None:
            return
        text = json.dumps({"version": self._version, self._section: entries}, indent=1, sort_keys=True)
        try:
            with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=path.name, suffix=".tmp", delete=False) as f:
                tmp = Path(f.name)
                f.write(text)
            try:
                os.replace(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)  # only left when the rename failed
        except OSError as exc:
            self._off(f"cannot write {path} ({exc.strerror or exc})")

    def _load(self, path: Path) -> dict[str, Entry]:
        """The entries of ``path`` (none when it is missing); raises _Damaged saying why it cannot
        be used."""
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                raise ValueError(f"larger than {MAX_FILE_BYTES} bytes")
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("version") != self._version:
                raise ValueError(f"not a version-{self._version} file of {self.what}")
            entries = data[self._section]
            if not isinstance(entries, dict) or not all(self._ok(e) for e in entries.values()):
                raise ValueError(f"an entry is not one of {self.what}")
            return dict(entries)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError) as exc:  # UnicodeDecodeError and JSON's are ValueErrors
            raise _Damaged(str(exc) or type(exc).__name__) from exc

    def _ok(self, entry: object) -> bool:
        return isinstance(entry, dict) and isinstance(entry.get("at"), int | float) and self._valid(entry)


class _Damaged(Exception):
    """The file cannot be used: why."""
