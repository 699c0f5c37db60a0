"""Keeps the engine's n-gram cache in line with the chat history, in the engine's process.

No Qt here (the engine process imports it). After a target loads, and whenever the window says
the history changed (an answer was saved, conversations or messages were deleted), a background
thread reads the history's messages (read-only), brings the cache file next to the history up to
date (:func:`desktop_app.engine.drafters.ngram_store.sync`) and hands its table to the engine. Requests
that arrive while a sync runs are merged into one more sync; answers never wait for it (it only
takes the engine's lock to tokenize one message, or to swap the table in).
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.engine.drafters.history_vocab import TargetChanged
from desktop_app.engine.drafters.ngram_counts import NgramCounts
from desktop_app.engine.drafters.ngram_store import HISTORY_ORDERS, CacheState, SourceMessage, sync
from desktop_app.engine.errors import EngineError
from desktop_app.store.history import read_messages

if TYPE_CHECKING:
    from desktop_app.engine import Engine

CACHE_FOLDER = "ngram-cache"  # next to the history file: one <vocabulary fingerprint>.npz per vocabulary
KEEP_FILES = 3  # caches of other vocabularies kept for switching models back (the newest used)


def log(line: str) -> None:
    """The engine process's log: its stderr."""
    print(line, file=sys.stderr, flush=True)


def cache_path(history: Path, fingerprint: str) -> Path:
    return history.parent / CACHE_FOLDER / f"{fingerprint}.npz"


def source_messages(history: Path) -> list[SourceMessage]:
    """What the cache learns from, oldest first: the user's messages and the answers that ended
    (one still streaming, or cut off by a crash of the window, has no stats yet)."""
    return [
        SourceMessage(m.id, m.content)
        for m in read_messages(history)
        if m.content and (m.role == "user" or (m.role == "assistant" and m.stats is not None))
    ]


def tidy_folder(keep: Path, others: int) -> None:
    """Remove the other vocabularies' cache files but the ``others`` used last (0 after a
    deletion: they may hold the deleted text; they are rebuilt when their model loads again)."""
    files = sorted((p for p in keep.parent.glob("*.npz") if p != keep), key=lambda p: p.stat().st_mtime, reverse=True)
    for stale in files[others:]:
        stale.unlink(missing_ok=True)


@dataclass(frozen=True)
class _Request:
    history: Path
    forget_session: bool


class HistoryNgrams:
    """The engine's history n-grams, synced in one background thread (see the module)."""

    def __init__(self, engine: Engine, log: Callable[[str], None] = log) -> None:
        self.engine = engine
        self.log = log
        self.syncs = 0  # finished syncs (whatever their outcome): tests wait on it
        self._known: tuple[Path, CacheState] | None = None  # the last sync's file and result
        self._pending: _Request | None = None
        self._running = False
        self._closed = False
        self._wake = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="history-ngrams", daemon=True)
        self._thread.start()

    def request(self, history: Path, forget_session: bool = False) -> None:
        """Sync with ``history`` soon (merged with a request not started yet; ``forget_session``
        after a deletion: the answers of this run may hold the deleted text)."""
        with self._wake:
            forget = forget_session or (self._pending is not None and self._pending.forget_session)
            self._pending = _Request(history, forget)
            self._wake.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no sync runs or is pending; False on timeout."""
        with self._wake:
            return self._wake.wait_for(lambda: self._pending is None and not self._running, timeout)

    def close(self) -> None:
        """No more syncs (one running ends at its next tokenization once the engine closes)."""
        with self._wake:
            self._closed = True
            self._pending = None
            self._wake.notify_all()

    def _run(self) -> None:
        while True:
            with self._wake:
                self._wake.wait_for(lambda: self._pending is not None or self._closed)
                if self._closed:
                    return
                job, self._pending = self._pending, None
                self._running = True
            assert job is not None
            try:
                self.sync_now(job.history, job.forget_session)
            except TargetChanged:
                self.request(job.history, job.forget_session)  # again, with the target loaded now
            except Exception:  # noqa: BLE001 - a failed sync leaves the tables as they were
                self.log("n-gram cache: the sync failed; drafts go on without the history's update")
                traceback.print_exc()
            finally:
                with self._wake:
                    self._running = False
                    self.syncs += 1
                    self._wake.notify_all()

    def sync_now(self, history: Path, forget_session: bool = False) -> CacheState | None:
        """One sync, in this thread; None when there is nothing to sync with (no target loaded,
        or the history cannot be read: said in the log, the tables stay as they are)."""
        try:
            vocab = self.engine.history_vocab()
        except EngineError:
            return None  # no target: its load syncs
        try:
            messages = source_messages(history)
        except Exception as exc:  # noqa: BLE001 - sqlite3 errors, or a damaged stats field
            self.log(f"n-gram cache: the chat history cannot be read ({type(exc).__name__}: {exc}); not synced")
            if forget_session:
                vocab.use_history(NgramCounts(HISTORY_ORDERS), forget_session=True)  # deleted text must not draft
            return None
        path = cache_path(history, vocab.fingerprint)
        known = self._known[1] if self._known is not None and self._known[0] == path else None
        try:
            state = sync(path, vocab.fingerprint, messages, vocab.tokenize, self.log, vocab.n_vocab, known)
        except Exception:
            if forget_session:
                vocab.use_history(NgramCounts(HISTORY_ORDERS), forget_session=True)
            raise
        vocab.use_history(state.counts, forget_session)
        self._known = (path, state)
        try:
            tidy_folder(path, 0 if forget_session else KEEP_FILES - 1)
        except OSError as exc:
            self.log(f"n-gram cache: cannot tidy {path.parent} ({exc})")
        return state
