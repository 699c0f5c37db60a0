"""The PySide6 window: widgets and the Qt side of the engine process (engine_client.py)."""
