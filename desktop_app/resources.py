"""Where the app's bundled resources (icons, styles, benchmark prompts) are."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "resources"
    return Path(__file__).resolve().parents[1] / "resources"
