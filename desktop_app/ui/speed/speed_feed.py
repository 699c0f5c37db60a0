"""What feeds the side panel's gauge: the chat's own answers only.

Race runs and API answers go through the same engine, but the gauge and the "last answer"
figures are the chat's: they never change for them. Another model starts the dial afresh. The
status bar's thread line follows every answer (they all run with the engine's threads).
"""

from __future__ import annotations

from PySide6.QtCore import QObject

from desktop_app.engine.stats import GenerationStats
from desktop_app.engine_process.protocol import Done
from desktop_app.ui.conversations.chat_session import ChatSession
from desktop_app.ui.engine.engine_client import EngineClient, GenerationHandle
from desktop_app.ui.speed.side_panel import SidePanel
from desktop_app.ui.window.status_bar import EngineStatusBar


class ChatSpeedFeed(QObject):
    def __init__(
        self,
        client: EngineClient,
        session: ChatSession,
        side: SidePanel,
        status: EngineStatusBar,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._session = session
        self._side = side
        self._status = status
        client.generation_started.connect(self._on_started)
        client.model_loaded.connect(lambda _models: side.reset_speed())  # its own speeds and scale

    def _on_started(self, handle: GenerationHandle) -> None:
        # The session takes the handle when generate() returns, before any report arrives
        # (reports come through the event loop), so each report can ask whose answer it is.
        handle.stats_updated.connect(lambda stats: self._on_stats(handle, stats))
        handle.finished.connect(lambda done: self._on_finished(handle, done))

    def _ours(self, handle: GenerationHandle) -> bool:
        return handle is self._session.handle

    def _on_stats(self, handle: GenerationHandle, stats: GenerationStats) -> None:
        self._status.set_threads(stats.threads)
        if self._ours(handle):
            self._side.show_live(stats)

    def _on_finished(self, handle: GenerationHandle, done: Done) -> None:
        self._status.set_threads(done.stats.threads)
        if self._ours(handle):
            self._side.show_final(done.stats)
