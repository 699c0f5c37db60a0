"""The engine process's requests in flight: which run now, each with its cancel flag, and which
were cancelled before they started. An answer can run between two texts of a long embedding
(:meth:`Engine.embed`'s ``between``), so more than one may be running, one inside the other."""

from __future__ import annotations

import threading


class RunningJobs:
    """Thread-safe: the job thread begins and ends jobs, the pipe's reader cancels them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[int, threading.Event] = {}
        self._cancelled: set[int] = set()  # queued requests cancelled before they started

    def begin(self, job_id: int) -> threading.Event | None:
        """The job's cancel flag as it starts; None when it was cancelled while it waited."""
        with self._lock:
            if job_id in self._cancelled:
                self._cancelled.discard(job_id)
                return None
            flag = self._running[job_id] = threading.Event()
            return flag

    def end(self, job_id: int) -> None:
        with self._lock:
            self._running.pop(job_id, None)

    def cancel(self, job_id: int) -> None:
        """Stop it at its next step if it runs, or before it starts."""
        with self._lock:
            flag = self._running.get(job_id)
            if flag is not None:
                flag.set()
            else:
                self._cancelled.add(job_id)

    def cancel_all(self) -> None:
        with self._lock:
            for flag in self._running.values():
                flag.set()
