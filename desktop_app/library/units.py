"""Sizes, parameter counts and durations as people read them (CLI and GUI share these)."""

from __future__ import annotations


def human_size(n_bytes: float) -> str:
    """Decimal units, as disk and download tools show them: 7.2 MB, 4.7 GB."""
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n_bytes) < 1000 or unit == "GB":
            return f"{n_bytes:.0f} {unit}" if unit == "B" else f"{n_bytes:.1f} {unit}"
        n_bytes /= 1000
    return f"{n_bytes:.1f} GB"  # pragma: no cover - unreachable


def human_params(n: int) -> str:
    if n >= 1e9:
        return f"{n / 1e9:.1f}B"
    if n >= 1e6:
        return f"{n / 1e6:.1f}M"
    return f"{n / 1e3:.0f}K" if n else "-"


def human_duration(seconds: float | None) -> str:
    """m:ss or h:mm:ss; ``--:--`` when unknown."""
    if seconds is None:
        return "--:--"
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"
