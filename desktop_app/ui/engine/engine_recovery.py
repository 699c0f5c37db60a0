"""When the engine process dies: the banner says why, and offers a restart with the same models
(or, after a lost worker, the same models with every layer on this computer)."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal, Slot

from desktop_app.ui.engine.engine_client import EngineClient
from desktop_app.ui.models.model_bar import ModelBar
from desktop_app.ui.window.status_bar import CrashBanner, EngineStatusBar


class EngineRecovery(QObject):
    """Shows the engine's crash and brings the engine back when the user asks.

    Signals:
        state_changed(): the engine stopped or is starting again (what the window enables may change).
    """

    state_changed = Signal()

    def __init__(
        self,
        client: EngineClient,
        banner: CrashBanner,
        model_bar: ModelBar,
        status: EngineStatusBar,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._client = client
        self._banner = banner
        self._bar = model_bar
        self._status = status
        client.engine_crashed.connect(self._on_crash)
        banner.restart_requested.connect(self.restart_engine)
        banner.local_requested.connect(self.reload_locally)

    @Slot(str)
    def _on_crash(self, reason: str) -> None:
        last = self._client.last_load
        self._banner.show_reason(reason, offer_local=last is not None and bool(last.target_options.workers))
        self._bar.set_idle("Engine stopped")
        self._status.set_models(None)
        self.state_changed.emit()

    def restart_engine(self) -> None:
        """A fresh engine process with the last models loaded."""
        self._banner.hide()
        self._client.restart()
        self._bar.set_loading("Restarting the engine…")
        self.state_changed.emit()

    def reload_locally(self) -> None:
        """After a lost worker: the same models with every layer on this computer (the
        workers setting is kept for the next load)."""
        self._banner.hide()
        last = self._client.last_load
        self._client.restart(last.locally() if last is not None else None)
        self._bar.set_loading("Loading on this computer…")
        self.state_changed.emit()
