"""Counting chat prompts for the window's context meter, on a thread of its own.

The window asks while the user types (debounced); only the newest question matters, so a
question waiting when a newer one comes is dropped. An API client's questions (``keep``) are
never dropped: they are answered in turn, before the window's. Counting takes the engine's lock: it waits
for a running answer or load, never the job queue, and holds the engine for one render.
"""

from __future__ import annotations

import threading
import traceback
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from desktop_app.engine.errors import EngineError
from desktop_app.engine_process.protocol import CountPrompt, EngineEvent, PromptCounted

if TYPE_CHECKING:  # the engine process imports llama.cpp only when it starts
    from desktop_app.engine import Engine


class PromptCounter:
    """Answers CountPrompt commands with PromptCounted events, newest first, one at a time."""

    def __init__(self, engine: Engine, send: Callable[[EngineEvent], None]) -> None:
        self._engine = engine
        self._send = send
        self._wanted: CountPrompt | None = None
        self._kept: deque[CountPrompt] = deque()
        self._stopped = False
        self._wake = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="engine-counter", daemon=True)
        self._thread.start()

    def request(self, command: CountPrompt) -> None:
        """Count this prompt next, instead of any not counted yet (a kept one: after those kept)."""
        with self._wake:
            if command.keep:
                self._kept.append(command)
            else:
                self._wanted = command
            self._wake.notify()

    def close(self) -> None:
        with self._wake:
            self._stopped = True
            self._wake.notify()
        self._thread.join(timeout=1.0)

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._wanted is None and not self._kept and not self._stopped:
                    self._wake.wait()
                if self._stopped:
                    return
                if self._kept:
                    command = self._kept.popleft()
                else:
                    assert self._wanted is not None
                    command, self._wanted = self._wanted, None
            try:
                event = PromptCounted(command.id, self._engine.count_prompt(command.request))
            except Exception as exc:  # noqa: BLE001 - said to the window (no model yet, a bad message); counting goes on
                if not isinstance(exc, (EngineError, ValueError)):
                    traceback.print_exc()
                event = PromptCounted(command.id, None, str(exc))
            self._send(event)
