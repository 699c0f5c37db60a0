"""One tint per drafter: the background of answer text that came from that drafter's accepted tokens.

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
# HSL saturation and lightness: a pale tint under dark text (contrast >= 10:1 with black), a deep
# one under light text (>= 6:1 with white).
LIGHT_TINT = (200, 205)
DARK_TINT = (140, 70)


def is_dark(palette: QPalette) -> bool:
    """Light text on a dark window (a dark theme)."""
    return (
        palette.color(QPalette.ColorRole.WindowText).lightness() > palette.color(QPalette.ColorRole.Window).lightness()
    )


def drafter_tint(drafter: str, palette: QPalette) -> QColor:
    """The background for text from ``drafter`` (a DrafterKind value) on ``palette``.

    A value that is no DrafterKind (a drafter this version does not know) gets the palette's
    highlight colour, faded.
    """
    try:
        hue = DRAFTER_HUES[DrafterKind(drafter)]
    except ValueError:
        tint = QColor(palette.color(QPalette.ColorRole.Highlight))
        tint.setAlpha(70)
        return tint
    saturation, lightness = DARK_TINT if is_dark(palette) else LIGHT_TINT
    return QColor.fromHsl(hue, saturation, lightness)


def drafter_label(drafter: str) -> str:
    """A drafter's name for people (its DrafterKind label; the raw value when unknown)."""
    try:
        return DrafterKind(drafter).label
    except ValueError:
        return drafter


def legend_html(palette: QPalette, drafters: Iterable[str] | None = None) -> str:
    """Rich text naming each drafter on its own tint (every DrafterKind when ``drafters`` is None)."""
    values = [k.value for k in DrafterKind] if drafters is None else list(dict.fromkeys(drafters))
    text = palette.color(QPalette.ColorRole.WindowText).name()
    return " ".join(
        f'<span style="background-color: {drafter_tint(v, palette).name()}; color: {text};">'
        f"&nbsp;{html.escape(drafter_label(v))}&nbsp;</span>"
        for v in values
    )
