"""The status bar (backend, device, models, memory: each elides on a narrow screen, never cut) and the
engine-crash banner."""

from __future__ import annotations

import os
from collections.abc import Callable

import psutil
from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QStatusBar, QWidget

from desktop_app.engine.api import LoadedModels
from desktop_app.engine_process.protocol import Ready
from desktop_app.ui.widgets.elided_label import ElidedLabel
from desktop_app.ui.widgets.plain_text import plain_label, plain_tip

MEMORY_REFRESH_MS = 2000


def resident_bytes(pids: list[int]) -> int:
    """Resident memory of these processes together (missing ones count 0)."""
    total = 0
    for pid in pids:
        try:
            total += psutil.Process(pid).memory_info().rss
        except (psutil.Error, OSError):
            pass
    return total


class EngineStatusBar(QStatusBar):
    """Shows the backend, device, loaded models and the memory of the app plus its engine."""

    def __init__(self, engine_pid: Callable[[], int | None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._engine_pid = engine_pid
        self.backend = ElidedLabel("backend: starting…", min_chars=8)  # each elides on a narrow screen
        self.backend.setObjectName("backendLabel")
        self.models = ElidedLabel("no model loaded", min_chars=16)  # a long name never widens the window
        self.models.setObjectName("modelsLabel")
        self.threads = ElidedLabel(min_chars=8)
        self.threads.setObjectName("threadsLabel")
        self.threads.setToolTip(
            "CPU threads the engine computes with: measured on the live model and changed "
            "when the machine gets busy or quiet (a count set in Settings stays fixed)"
        )
        self.memory = ElidedLabel(min_chars=19)  # "memory 1,234 MiB" whole: the others elide first
        self.memory.setObjectName("memoryLabel")
        self.api = ElidedLabel(min_chars=12)
        self.api.setObjectName("apiLabel")
        self.api.hide()
        self._api_url = ""
        self._build_warned = False
        self._api_requests: Callable[[], int] = lambda: 0
        for label in (self.api, self.backend, self.models, self.threads, self.memory):
            self.addPermanentWidget(label)
        self._timer = QTimer(self)
        self._timer.setInterval(MEMORY_REFRESH_MS)
        self._timer.timeout.connect(self.refresh_memory)
        self._timer.timeout.connect(self.refresh_api)
        self._timer.start()
        self.refresh_memory()

    def set_backend(self, info: Ready) -> None:
        name, device = info.backend_name, info.device
        text = f"{name} · {device}" if device and device != name else name
        if info.build_warning:
            # Said once a run (an engine restart sends Ready again); the label keeps a mark.
            text = f"⚠ {text}"
            if not self._build_warned:
                self._build_warned = True
                self.showMessage(info.build_warning[:1].upper() + info.build_warning[1:], 60_000)
        self.backend.setText(text)
        self.backend.setToolTip(plain_tip(info.backend + (f"\n\n{info.build_warning}" if info.build_warning else "")))

    def set_threads(self, text: str) -> None:
        """The thread count in use and why ("1 thread: machine busy"); "" keeps the last one."""
        if text:
            self.threads.setText(text)

    def set_models(self, loaded: LoadedModels | None) -> None:
        if loaded is None:
            self.models.setText("no model loaded")
            self.threads.clear()
            return
        self.set_threads(loaded.threads)
        target = loaded.target
        text = f"{target.name} ({target.quantization}, ctx {target.n_ctx})"
        if loaded.draft is not None:
            text += f" + draft {loaded.draft.name}"
        if target.placement:
            text += f" · split: {target.placement}"
        self.models.setText(text)
        self.models.setToolTip(plain_tip("\n".join(f"remote device {line}" for line in target.remote_devices)))

    def show_api(self, url: str | None, requests: Callable[[], int] | None = None) -> None:
        """The local API's address and how many requests it served (None: the API is off)."""
        self._api_url = url or ""
        if requests is not None:
            self._api_requests = requests
        self.api.setVisible(bool(url))
        self.refresh_api()

    def refresh_api(self) -> None:
        if self._api_url:
            n = self._api_requests()
            self.api.setText(f"API {self._api_url} · {n} request{'s' if n != 1 else ''}")

    def refresh_memory(self) -> None:
        pid = self._engine_pid()
        rss = resident_bytes([os.getpid(), *([pid] if pid else [])])
        self.memory.setText(f"memory {rss / 2**20:.0f} MiB")


class CrashBanner(QFrame):
    """Says that the engine died and offers to restart it (or, after a lost worker, to reload
    the models on this computer alone).

    Signals:
        restart_requested(): the user clicked "Restart engine".
        local_requested(): the user clicked "Reload on this computer".
    """

    restart_requested = Signal()
    local_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("engineBanner")
        self.setAccessibleName("Engine stopped")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.ToolTipBase)
        self.setForegroundRole(QPalette.ColorRole.ToolTipText)
        layout = QHBoxLayout(self)
        self.message = plain_label()
        self.message.setObjectName("engineBannerText")
        self.message.setWordWrap(True)
        self.restart = QPushButton("Restart engine")
        self.restart.setObjectName("restartEngineButton")
        self.restart.setAccessibleName("Restart engine")
        self.restart.clicked.connect(self.restart_requested.emit)
        self.local = QPushButton("Reload on this computer")
        self.local.setObjectName("reloadLocallyButton")
        self.local.setAccessibleName("Reload the models on this computer, without workers")
        self.local.clicked.connect(self.local_requested.emit)
        layout.addWidget(self.message, 1)
        layout.addWidget(self.local)
        layout.addWidget(self.restart)
        self.hide()

    def show_reason(self, reason: str, offer_local: bool = False) -> None:
        self.message.setText(f"{reason}. Your conversations are safe; the answer keeps what was shown.")
        self.local.setVisible(offer_local)
        self.show()
