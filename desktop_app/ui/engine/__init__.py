"""The window's side of the engine: its process's events as signals, the crash banner's restart, and the Serve API switch."""
