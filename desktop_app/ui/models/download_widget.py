"""A download's progress: bar, bytes / speed / time-left label, cancel button.

The download runs on :class:`desktop_app.library.downloads.DownloadTask`'s thread; its callbacks
only emit signals of a :class:`_DownloadRelay`, which Qt queues to this widget's thread, so the
widget never blocks and the download thread never touches a widget.

Why a relay and not signals of the widget itself: the GUI thread may delete the widget at any
moment (its window closed and deleted, ``deleteLater``, a parent going away) while the download
thread is between two callbacks, and nothing can tell that thread in time. PySide checks the
emitting object's wrapper, then releases the GIL and calls ``QMetaObject::metacall`` on the bare
C++ pointer; if the GUI thread deletes the widget in that gap, the download thread calls into
freed memory and the process dies with a segmentation fault (catching ``RuntimeError`` cannot
close that gap). The relay is an object only the download thread can end: it has no parent, the
task's callbacks hold it, and its last callback hands it to the GUI thread with ``deleteLater``.
Qt supports exactly this: a live sender in one thread, a receiver deleted in its own thread (the
queued connection and its pending calls go with the receiver).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QPushButton, QVBoxLayout, QWidget

from desktop_app.library.downloads import DownloadProgress, DownloadResult, DownloadTask
from desktop_app.library.errors import DownloadCancelled, DownloadError
from desktop_app.library.units import human_duration, human_size
from desktop_app.ui.engine.thread_relay import hold
from desktop_app.ui.widgets.plain_text import plain_label, plain_tip

BAR_STEPS = 1000  # QProgressBar holds an int: count in permille, not bytes (files pass 2 GB)


class _DownloadRelay(QObject):
    """What one download thread emits on (see the module docstring): never parented, kept alive
    by the task's callbacks, deleted on the GUI thread after the thread's last callback. It also
    stops the download when the widget goes (:meth:`stop`, on the GUI thread): a connection to
    the task's own ``cancel`` raced the task being freed on its thread as the thread ended."""

    progressed = Signal(object)
    succeeded = Signal(object)
    errored = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.cancel_event: threading.Event | None = None

    @Slot()
    def stop(self) -> None:
        if self.cancel_event is not None:
            self.cancel_event.set()

    # The DownloadTask callbacks; they run on the download thread.
    def progress(self, progress: DownloadProgress) -> None:
        self.progressed.emit(progress)

    def finish(self, result: DownloadResult) -> None:
        self.succeeded.emit(result)
        self.deleteLater()  # thread-safe; the GUI thread deletes it after delivering the signal

    def fail(self, error: DownloadError) -> None:
        self.errored.emit(error)
        self.deleteLater()


class DownloadWidget(QWidget):
    """Shows one download at a time; ``start`` begins one, the Cancel button stops it.

    Signals:
        finished(str): the path of the downloaded, verified file.
        failed(str): a one-line reason in plain words (gated repo, 404, offline, disk full...);
            the full reason is the detail's tooltip.
        cancelled(): the user cancelled; the partial file stays for a later resume.

    After a failure or a cancel, Retry starts the same download again (it resumes).
    """

    finished = Signal(str)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._task: DownloadTask | None = None
        self._last: tuple[str, str, dict[str, Any]] | None = None  # what Retry starts again
        self.title = plain_label("No download")
        self.title.setObjectName("downloadTitle")
        self.bar = QProgressBar()
        self.bar.setObjectName("downloadProgress")
        self.bar.setRange(0, BAR_STEPS)
        self.bar.setValue(0)
        self.bar.setAccessibleName("Download progress")
        self.detail = plain_label()
        self.detail.setObjectName("downloadDetail")
        self.detail.setAccessibleName("Downloaded bytes, speed and time left")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("downloadCancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.retry_button = QPushButton("Retry")
        self.retry_button.setObjectName("downloadRetry")
        self.retry_button.setAccessibleName("Retry the download")
        self.retry_button.hide()
        self.retry_button.clicked.connect(self.retry)
        row = QHBoxLayout()
        row.addWidget(self.bar, 1)
        row.addWidget(self.cancel_button)
        row.addWidget(self.retry_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addLayout(row)
        layout.addWidget(self.detail)

    @property
    def running(self) -> bool:
        """A download is under way: its end (finished or failed) has not reached this widget yet.
        The task's thread may still be winding down after its last callback: the next download
        can start meanwhile (a pair's files, one after the other)."""
        return self._task is not None and self._task.running

    def start(self, repo_id: str, filename: str, **options: Any) -> None:
        """Begin downloading; ``options`` go to :func:`download_file` (endpoint, dest_dir, token...)."""
        if self.running:
            raise RuntimeError("a download is already running in this widget")
        self._last = (repo_id, filename, dict(options))
        self.title.setText(f"Downloading {options.get('save_as') or Path(filename).name} from {repo_id}")
        self.bar.setValue(0)
        self.detail.setText("Connecting…")
        self.detail.setToolTip("")
        self.cancel_button.setEnabled(True)
        self.retry_button.hide()
        relay = _DownloadRelay()  # no parent: only the download thread's last callback ends it
        relay.progressed.connect(self._on_progress)  # queued; Qt drops them if this widget goes
        relay.succeeded.connect(self._on_finished)
        relay.errored.connect(self._on_failed)
        self._task = DownloadTask(
            repo_id,
            filename,
            on_progress=relay.progress,
            on_finished=relay.finish,
            on_failed=relay.fail,
            **options,
        )
        relay.cancel_event = self._task.cancel_event
        self.destroyed.connect(relay.stop)  # closing the widget stops its download
        hold(relay, self._task.thread)  # let go in this thread, never in the download's (ui/engine/thread_relay.py)
        self._task.start()

    def retry(self) -> None:
        """Start the last download again (the Retry button); a partial file resumes."""
        if self._last is not None and not self.running:
            repo_id, filename, options = self._last
            self.start(repo_id, filename, **options)

    def cancel(self) -> None:
        if self._task is not None:
            self.cancel_button.setEnabled(False)
            self.detail.setText("Cancelling…")
            self._task.cancel()

    @Slot(object)
    def _on_progress(self, p: DownloadProgress) -> None:
        if p.fraction is not None:
            self.bar.setValue(min(BAR_STEPS, int(p.fraction * BAR_STEPS)))
        else:
            self.bar.setRange(0, 0)  # unknown size: a busy bar
        total = human_size(p.total) if p.total else "?"
        if p.phase == "checking":
            self.detail.setText(f"Checking the partial download: {human_size(p.done)} of {total}")
        elif p.phase == "verifying":
            self.detail.setText("Verifying the SHA-256…")
        else:
            self.detail.setText(
                f"{human_size(p.done)} of {total} · {human_size(p.speed)}/s · {human_duration(p.eta_s)} left"
            )

    @Slot(object)
    def _on_finished(self, result: DownloadResult) -> None:
        self._task = None  # ended: its thread only returns now
        self.bar.setRange(0, BAR_STEPS)
        self.bar.setValue(BAR_STEPS)
        self.cancel_button.setEnabled(False)
        check = "verified" if result.verified else "already present" if result.already_present else "not verified"
        self.title.setText(f"Downloaded {result.path.name}")
        self.detail.setText(f"{result.path} · {human_size(result.size)} · {check}")
        self.finished.emit(str(result.path))

    @Slot(object)
    def _on_failed(self, error: DownloadError) -> None:
        self._task = None
        self.bar.setRange(0, BAR_STEPS)
        self.cancel_button.setEnabled(False)
        self.retry_button.show()
        self.detail.setText(error.plain)
        self.detail.setToolTip(plain_tip(str(error)))  # the full reason (URLs, HTTP codes) for those who want it
        if isinstance(error, DownloadCancelled):
            self.title.setText("Download cancelled")
            self.cancelled.emit()
        else:
            self.title.setText("Download failed")
            self.failed.emit(error.plain)
