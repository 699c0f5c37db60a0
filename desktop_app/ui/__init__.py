"""The PySide6 window: widgets and the Qt side of the engine process (engine_client.py).

Qt's GUI thread pool is turned off before any widget exists: Qt splits large image operations
(filling and converting the window's backing store on every paint) over half the cores, and on a
machine whose cores the engine's threads hold, each refresh of a streaming answer woke two pooled
threads about 20 times, 240 wake-ups a second, each taking a core from the engine for a moment
(docs/window-speed.md). The window's thread does those operations alone, in about the same time.
"""

import os

os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")
