"""Conversations: the sidebar, export and import, and the open conversation's session with its history writes."""
