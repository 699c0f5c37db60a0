"""A push button with its object name (for tests and style sheets) and its accessible name."""

from __future__ import annotations

from PySide6.QtWidgets import QPushButton


def named_button(text: str, object_name: str, accessible_name: str) -> QPushButton:
    button = QPushButton(text)
    button.setObjectName(object_name)
    button.setAccessibleName(accessible_name)
    return button
