"""Settings and chat history (SQLite). Never imports Qt."""

from __future__ import annotations

from desktop_app.store.errors import DataDirError, HistoryDamaged, StoreError
from desktop_app.store.history import Conversation, History, StoredMessage, start_fresh
from desktop_app.store.settings import SETTINGS, Setting, Settings

__all__ = [
    "SETTINGS",
    "Conversation",
    "DataDirError",
    "History",
    "HistoryDamaged",
    "Setting",
    "Settings",
    "StoreError",
    "StoredMessage",
    "start_fresh",
]
