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


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def config_dir() -> Path:
    home = _home()
    return _ensure(home / "config" if home else Path(platformdirs.user_config_dir(APP_NAME)))


def data_dir() -> Path:
    home = _home()
    return _ensure(home / "data" if home else Path(platformdirs.user_data_dir(APP_NAME)))


def models_dir() -> Path:
    return _ensure(data_dir() / "models")
