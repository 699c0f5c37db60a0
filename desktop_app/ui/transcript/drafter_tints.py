"""One colour per drafter: the underline of answer text that came from that drafter's accepted tokens
(an underline, not a background, so that highlighted code stays readable).

Declared once here and used by the transcript (the tinted text, its tooltip) and the side panel
(the legend next to "Highlight draft tokens").
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from PySide6.QtGui import QColor, QPalette

from desktop_app.engine.api import DrafterKind

# Hues (degrees on the colour wheel) far apart, so that neighbouring runs are told apart.
DRAFTER_HUES: dict[DrafterKind, int] = {
    DrafterKind.MTP: 275,  # violet
    DrafterKind.ASSISTANT: 330,  # pink
    DrafterKind.MODEL: 210,  # blue
    DrafterKind.NGRAM: 125,  # green
    DrafterKind.NGRAM_MAP: 35,  # orange
    DrafterKind.NGRAM_CACHE: 180,  # teal
}
# HSL saturation and lightness: a deep colour on a light window, a light one on a dark window, so
# that a one-pixel underline stands out from the background (contrast >= 3:1 either way).
LIGHT_TINT = (220, 95)
DARK_TINT = (200, 175)


def is_dark(palette: QPalette) -> bool:
    """Light text on a dark window (a dark theme)."""
    return (
        palette.color(QPalette.ColorRole.WindowText).lightness() > palette.color(QPalette.ColorRole.Window).lightness()
    )


def drafter_tint(drafter: str, palette: QPalette) -> QColor:
    """The underline colour of text from ``drafter`` (a DrafterKind value) on ``palette``.

    A value that is no DrafterKind (a drafter this version does not know) gets the palette's
    highlight colour.
    """
    try:
        hue = DRAFTER_HUES[DrafterKind(drafter)]
    except ValueError:
        return QColor(palette.color(QPalette.ColorRole.Highlight))
    saturation, lightness = DARK_TINT if is_dark(palette) else LIGHT_TINT
    return QColor.fromHsl(hue, saturation, lightness)


def drafter_label(drafter: str) -> str:
    """A drafter's name for people (its DrafterKind label; the raw value when unknown)."""
    try:
        return DrafterKind(drafter).label
    except ValueError:
        return drafter


def legend_html(palette: QPalette, drafters: Iterable[str] | None = None) -> str:
    """Rich text naming each drafter, underlined in its colour after a square of it (every
    DrafterKind when ``drafters`` is None)."""
    values = [k.value for k in DrafterKind] if drafters is None else list(dict.fromkeys(drafters))
    marks = ((html.escape(drafter_label(v)), drafter_tint(v, palette).name()) for v in values)
    return " ".join(
        f'<span style="color: {tint};">&#9632;</span>&nbsp;'
        f'<span style="text-decoration: underline; text-decoration-color: {tint};">{label}</span>&nbsp;'
        for label, tint in marks
    )
