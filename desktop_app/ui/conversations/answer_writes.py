"""The history writes of the answer being streamed (ui/conversations/chat_session.py): its text every
:data:`SAVE_INTERVAL_MS` while it streams, so a crash keeps what the user saw, and at the end. A
write that fails is said once per answer; the answer goes on, on screen."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

from desktop_app.store import History

SAVE_INTERVAL_MS = 500


class AnswerWrites:
    """``current()`` gives the streaming answer's stored id and text (None, None: no answer);
    ``failed(message)`` tells the user a write failed."""

    def __init__(
        self,
        history: History,
        current: Callable[[], tuple[int | None, str | None]],
        failed: Callable[[str], None],
        parent: QObject,
    ) -> None:
        self.history = history
        self._current = current
        self._failed = failed
        self.unsaved = False  # text arrived since the last write
        self._error_shown = False
        self._timer = QTimer(parent)
        self._timer.setInterval(SAVE_INTERVAL_MS)
        self._timer.timeout.connect(self.save_partial)

    def begin(self) -> None:
        self._error_shown = False
        self._timer.start()

    def end(self) -> None:
        self._timer.stop()
        self.unsaved = False

    def save_partial(self) -> None:
        answer_id, text = self._current()
        if self.unsaved and answer_id is not None and text is not None:
            self.write(lambda: self.history.update_message(answer_id, text))
            self.unsaved = False

    def write(self, action: Callable[[], object]) -> None:
        try:
            action()
        except sqlite3.Error as exc:
            if not self._error_shown:
                self._error_shown = True
                self._failed(
                    f"The answer is not being saved to the chat history ({exc}); it stays on screen: copy what you need"
                )
