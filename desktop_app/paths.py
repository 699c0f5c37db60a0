"""Where SpecChat keeps user data. One variable, ``SPECCHAT_HOME``, relocates all of it.

No Qt here: the engine, the store and the CLI all use these paths.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "SpecChat"
HOME_ENV = "SPECCHAT_HOME"


def _home() -> Path | None:
    value = os.environ.get(HOME_ENV, "").strip()
    return Path(value).expanduser() if value else None


class DataDirError(OSError):
    """A folder for the user's data (settings, history, models) cannot be created or written:
    read-only, full, or under a file. The message names the folder and says what to do.

    An OSError, so every caller that already handles the disk failing handles this too (the
    CLI prints it as one line); the window's start-up shows it in its dialog."""


def ensure_folder(path: Path) -> Path:
    """``path``, created with its parents if missing; DataDirError naming it when it cannot be."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataDirError(
            f"SpecChat cannot create its folder {path} ({exc.strerror or exc}): {_remedy(path)}, "
            f"or set {HOME_ENV} to a folder you can write to"
        ) from exc
    return path


def _remedy(path: Path) -> str:
    """What stands in the way of creating ``path``: the nearest thing on it that exists."""
    for step in (path, *path.parents):
        try:
            if not step.exists():
                continue
        except OSError:  # a folder on the way cannot even be searched
            continue
        return f"make {step} writable" if step.is_dir() else f"{step} is a file, not a folder: move it away"
    return f"make the folder above {path} writable"


def config_dir() -> Path:
    home = _home()
    return ensure_folder(home / "config" if home else Path(platformdirs.user_config_dir(APP_NAME)))


def data_dir() -> Path:
    home = _home()
    return ensure_folder(home / "data" if home else Path(platformdirs.user_data_dir(APP_NAME)))


def models_dir() -> Path:
    return ensure_folder(data_dir() / "models")


def thread_counts_file() -> Path:
    """The CPU thread counts measured per machine, model and load, for the next process
    (desktop_app/engine/llama/thread_memory.py)."""
    return data_dir() / "thread-counts.json"


def model_speeds_file() -> Path:
    """The decoding speed measured per machine and model file, for the model library's speed
    predictions (desktop_app/engine/model_speeds.py, docs/speed-advice.md)."""
    return data_dir() / "model-speeds.json"


def auto_costs_file() -> Path:
    """Auto's costs measured per machine, llama.cpp build, models and thread count, for the next
    process (desktop_app/engine/auto/cost_memory.py)."""
    return data_dir() / "auto-costs.json"
