"""The PySide6 window. ``engine_worker`` (run in the engine's child process) imports no Qt."""
