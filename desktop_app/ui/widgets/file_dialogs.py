"""The window's file dialogs, opened in a sensible folder instead of the working directory.

Each kind of file has its own start: model files in the models folder, conversations (import
and export) in the user's Documents (home when there is none). Once a file was picked, the
next dialog of that kind opens in that file's folder, also after a restart (kept in
``last-folders.json`` in the config folder).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import QFileDialog, QWidget

from desktop_app.paths import config_dir, models_dir

log = logging.getLogger(__name__)

MODELS = "models"  # GGUF files: opened, added to the library
CONVERSATIONS = "conversations"  # exported and imported conversations


def _kept() -> Path:
    return config_dir() / "last-folders.json"


def _last_folders() -> dict[str, str]:
    try:
        data = json.loads(_kept().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def default_folder(kind: str) -> Path:
    """Where a dialog of ``kind`` opens before any file was picked."""
    if kind == MODELS:
        try:
            return models_dir()
        except OSError:
            return Path.home()
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    return Path(documents) if documents and Path(documents).is_dir() else Path.home()


def start_folder(kind: str) -> Path:
    """The folder of the last file picked in a dialog of ``kind`` (while it exists), else
    :func:`default_folder`."""
    last = _last_folders().get(kind)
    if last and Path(last).is_dir():
        return Path(last)
    return default_folder(kind)


def remember_folder(kind: str, picked: str) -> None:
    """Keep the folder of the file ``picked`` for the next dialog of ``kind`` (best effort)."""
    if not picked:
        return
    folders = _last_folders()
    folders[kind] = str(Path(picked).parent)
    try:
        _kept().write_text(json.dumps(folders, indent=1), encoding="utf-8")
    except OSError as exc:
        log.info("last folder not kept: %s", exc)


def ask_open_file(parent: QWidget | None, title: str, kind: str, filters: str) -> str:
    """A file to open, picked in a dialog that starts in :func:`start_folder`; "" when cancelled."""
    path, _filter = QFileDialog.getOpenFileName(parent, title, str(start_folder(kind)), filters)
    remember_folder(kind, path)
    return str(path)


def ask_save_file(parent: QWidget | None, title: str, kind: str, name: str, filters: str) -> str:
    """Where to save a file named ``name`` at first, picked in a dialog that starts in
    :func:`start_folder`; "" when cancelled."""
    path, _filter = QFileDialog.getSaveFileName(parent, title, str(start_folder(kind) / name), filters)
    remember_folder(kind, path)
    return str(path)
