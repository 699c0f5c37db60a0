"""Settings and chat history (SQLite). Never imports Qt."""

from __future__ import annotations

from desktop_app.store.history import Conversation, History, StoredMessage
from desktop_app.store.settings import SETTINGS, Setting, Settings

__all__ = ["SETTINGS", "Conversation", "History", "Setting", "Settings", "StoredMessage"]
