"""A visible focus ring for flat buttons (a message's Copy, Regenerate, Edit & resend): the
platform's style draws none on a flat button, so the keyboard's place was invisible there."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractButton

# A transparent border of the ring's width at rest, so that the button keeps its size with focus.
FLAT_FOCUS_RING = (
    "QPushButton, QToolButton { border: 2px solid transparent; border-radius: 4px; padding: 3px 8px; }"
    "QPushButton:hover, QToolButton:hover { background: palette(midlight); }"
    "QPushButton:pressed, QToolButton:pressed { background: palette(mid); }"
    "QPushButton:focus, QToolButton:focus { border-color: palette(highlight); }"
)  # disabled: the palette's own disabled text (palette(mid) was the window's colour on a dark theme: invisible)


def ring_on_focus(button: QAbstractButton) -> None:
    """Draw ``button`` flat, with a ring in the palette's highlight colour while it has the focus."""
    button.setStyleSheet(FLAT_FOCUS_RING)
