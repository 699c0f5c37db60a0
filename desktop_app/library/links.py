"""GGUF files the library uses where they are: "Add a file" records its path here instead of
copying it (a 20 GB model copied would take 40 GB). The list is ``linked-models.json`` in the
models folder; a file linked and later moved stays listed with the reason, until removed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from desktop_app import paths
from desktop_app.library.errors import LibraryError

LINKS_FILE = "linked-models.json"


def links_file() -> Path:
    return paths.models_dir() / LINKS_FILE


def linked_paths() -> list[Path]:
    """The linked files, in the order they were added; an unreadable list counts as empty."""
    try:
        data = json.loads(links_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, list):
        return []
    return [Path(p) for p in data if isinstance(p, str)]


def _write(links: list[Path]) -> None:
    path = links_file()
    temp = path.with_name(path.name + ".tmp")
    try:
        temp.write_text(json.dumps([str(p) for p in links], indent=1), encoding="utf-8")
        os.replace(temp, path)
    except OSError as exc:
        raise LibraryError(f"the library could not record its linked files in {path}: {exc.strerror or exc}") from exc


def add_link(path: Path) -> None:
    path = path.absolute()
    links = linked_paths()
    if path in links:
        raise LibraryError(f"{path.name} is already in the library ({path})")
    _write([*links, path])


def remove_link(path: Path) -> bool:
    """Forget ``path`` (the file stays where it is); False when it was not linked."""
    links = linked_paths()
    if Path(path).absolute() not in links:
        return False
    _write([p for p in links if p != Path(path).absolute()])
    return True
