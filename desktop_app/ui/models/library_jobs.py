"""Library work (scanning headers, vocabulary checks, adding, deleting, measuring the machine) on
a background thread, one job at a time, with results delivered as signals on the GUI thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from desktop_app.ui.engine.thread_relay import hold


class _JobRelay(QObject):
    """What one job thread emits on, never this window's objects: the window (and its LibraryJobs)
    can be deleted by the GUI thread while a job runs, and a thread emitting on a QObject that is
    being deleted crashes (see desktop_app/ui/models/download_widget.py). No parent; the job thread holds
    it and hands it to the GUI thread with ``deleteLater`` after its last signal."""

    done = Signal(object, object)
    failed = Signal(str)


class LibraryJobs(QObject):
    """Runs library work one job at a time on a background thread and reports through signals.

    Signals:
        done(object, object): the job's callback and its result, on the GUI thread.
        failed(str): a job raised; the message is for the user.
    """

    done = Signal(object, object)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()  # one job at a time: scans must not race a delete or import
        self.done.connect(lambda callback, result: callback(result))

    def run(self, work: Callable[[], Any], on_done: Callable[[Any], None]) -> threading.Thread:
        relay = _JobRelay()
        relay.done.connect(self.done)  # queued to this object; Qt drops them if it is deleted
        relay.failed.connect(self.failed)
        lock = self._lock  # the thread holds the lock and the relay, never this QObject

        def target() -> None:
            try:
                with lock:
                    try:
                        result = work()
                    except Exception as exc:  # noqa: BLE001 - any failure is shown to the user, never lost
                        relay.failed.emit(str(exc))
                        return
                relay.done.emit(on_done, result)
            finally:
                relay.deleteLater()

        thread = threading.Thread(target=target, name="model library", daemon=True)
        hold(relay, thread)
        thread.start()
        return thread
