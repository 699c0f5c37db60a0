"""Settings and chat history (SQLite). Never imports Qt."""
