"""Where the relays of background threads (download, library job, engine pipe reader) live until
their thread is over.

A relay is a parentless QObject a background thread emits on (see ui/models/download_widget.py for why).
The thread ends it with ``deleteLater``, so Qt deletes it in the GUI thread. But the relay's
Python wrapper owns it too: had the background thread dropped the last Python reference (its frame
ending, ``threading.Thread`` clearing its arguments), the wrapper would delete the C++ object
right there, in the background thread, while the GUI thread may be delivering that relay's queued
signals or its deferred delete. So the GUI thread keeps one reference to every relay it made
until the relay's thread has finished, and lets it go in the GUI thread.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject

_held: list[tuple[QObject, threading.Thread]] = []


def hold(relay: QObject, thread: threading.Thread) -> None:
    """Keep ``relay`` referenced until ``thread`` has ended (call in the GUI thread, which is
    also where relays whose threads ended are let go)."""
    _held[:] = [(r, t) for r, t in _held if t.is_alive() or not t.ident]
    _held.append((relay, thread))
