"""The Preferences window: its dialog, pages and fields, and what applying them changes in the main window."""
