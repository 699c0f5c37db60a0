"""Text is text: what a model, a server, a file or the user wrote, shown in a tooltip, a label or
a dialog exactly as written.

Qt reads a tooltip, a QLabel's and a QMessageBox's text as HTML whenever it looks like HTML
(``Qt::mightBeRichText``): an MCP tool named ``<img src=file:///etc/passwd>`` became a live tag.
Every such text goes through :func:`plain_tip` (tooltips) or is shown with
``Qt.TextFormat.PlainText`` (:func:`plain_label`, :func:`plain_box`).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget

MAX_TIP_CHARS = 4_000  # a tooltip longer than this (a server's stderr, a long prompt) is cut


def plain_tip(text: str) -> str:
    """``text`` as a tooltip that shows every character as written (newlines kept), cut past
    :data:`MAX_TIP_CHARS`; "" stays "" (no tooltip)."""
    if not text:
        return ""
    if len(text) > MAX_TIP_CHARS:
        text = f"{text[:MAX_TIP_CHARS]}… ({len(text):,} characters)"
    return f"<p style='white-space:pre-wrap'>{html.escape(text, quote=False)}</p>"


def plain_label(text: str = "", parent: QWidget | None = None) -> QLabel:
    """A label that shows its text as written, never as HTML."""
    label = QLabel(text, parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def plain_box(
    icon: QMessageBox.Icon,
    title: str,
    text: str,
    buttons: QMessageBox.StandardButton = QMessageBox.StandardButton.NoButton,
    parent: QWidget | None = None,
) -> QMessageBox:
    """A message box whose text is shown as written, never as HTML."""
    box = QMessageBox(icon, title, text, buttons, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    return box
