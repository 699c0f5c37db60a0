"""The engine's own process: its service loop, the typed pipe protocol, and the history sync.

No Qt: the window talks to it only through desktop_app.engine_process.protocol."""
