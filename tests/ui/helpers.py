"""Actions a user takes in the window, for the GUI tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt

from desktop_app.engine.stats import GenerationStats
from desktop_app.engine_process.protocol import Done, Piece
from desktop_app.ui.engine.engine_client import GenerationHandle
from tests.ui.conftest import ANSWER_TIMEOUT_MS


@dataclass
class AnswerWatch:
    """What the next answer's handle reported: text pieces (and with their drafters), live stats, the end."""

    pieces: list[str] = field(default_factory=list)
    runs: list[Piece] = field(default_factory=list)
    live: list[GenerationStats] = field(default_factory=list)
    done: Done | None = None
    failure: str | None = None
    handle: GenerationHandle | None = None

    def attach(self, handle: GenerationHandle) -> None:
        if self.handle is not None:
            return  # only the first answer started while watching
        self.handle = handle
        handle.token_received.connect(self._on_token)
        handle.stats_updated.connect(self.live.append)
        handle.finished.connect(lambda done: setattr(self, "done", done))
        handle.failed.connect(lambda message: setattr(self, "failure", message))

    def _on_token(self, text: str, drafter: str) -> None:
        self.pieces.append(text)
        self.runs.append((text, drafter))

    @property
    def ended(self) -> bool:
        return self.done is not None or self.failure is not None


@contextmanager
def next_answer(qtbot: Any, client: Any, timeout: int = ANSWER_TIMEOUT_MS) -> Iterator[AnswerWatch]:
    """Watch the next answer the client starts inside the block; wait for its end after it."""
    watch = AnswerWatch()
    client.generation_started.connect(watch.attach)
    try:
        yield watch
        qtbot.waitUntil(lambda: watch.ended, timeout=timeout)
    finally:
        client.generation_started.disconnect(watch.attach)


def pick(box: Any, data: str) -> None:
    """Choose a combo box entry the way a user does (activated, not just currentIndex)."""
    index = box.findData(data)
    assert index >= 0, f"{data!r} is not offered"
    box.setCurrentIndex(index)
    box.activated.emit(index)


def type_and_send(qtbot: Any, window: Any, text: str) -> None:
    """Type into messageInput and press Enter, as a user would."""
    box = window.input
    box.setFocus()
    qtbot.keyClicks(box, text)
    qtbot.keyClick(box, Qt.Key.Key_Return)


def send_and_wait(qtbot: Any, window: Any, text: str, timeout: int = ANSWER_TIMEOUT_MS) -> Done:
    """Send ``text`` and wait for the answer; returns its final text and stats."""
    with next_answer(qtbot, window.client, timeout) as watch:
        type_and_send(qtbot, window, text)
    qtbot.waitUntil(lambda: not window.session.busy, timeout=5000)
    assert watch.done is not None, watch.failure
    return watch.done


def last_answer(window: Any) -> Any:
    messages = [m for m in window.chat_view.messages if m.role == "assistant"]
    assert messages, "no assistant message in the transcript"
    return messages[-1]


def tip_text(tooltip: str) -> str:
    """What a tooltip shows, as plain text (tooltips of model, server and file text are escaped HTML)."""
    from PySide6.QtGui import QTextDocument

    doc = QTextDocument()
    doc.setHtml(tooltip)
    return doc.toPlainText()
