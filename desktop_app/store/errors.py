"""What can go wrong with the user's own data, said so the user can act on it."""

from __future__ import annotations

import time
from pathlib import Path

from desktop_app.paths import DataDirError  # declared with the folders it is about

__all__ = ["DataDirError", "HistoryDamaged", "StoreError", "set_aside"]


class StoreError(Exception):
    """A problem with the user's settings or history; the message is meant for the user."""


class HistoryDamaged(StoreError):
    """The history file exists but cannot be read as a database (or fails its integrity check)."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"Your chat history ({path}) cannot be read: {reason}")


def set_aside(path: Path, companions: tuple[str, ...] = ()) -> Path:
    """Rename ``path`` (and ``path + suffix`` for each companion) to ``<name>.broken-<time>``,
    keeping every byte; returns the new path of ``path``."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.broken-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.broken-{stamp}-{n}")
    path.rename(target)
    for suffix in companions:
        extra = Path(str(path) + suffix)
        if extra.exists():
            extra.rename(Path(str(target) + suffix))
    return target
