"""Models → API requests…: the *Serve API* switch's last requests, newest first, updated live.

The server records each request on its own thread (server/request_log.py); this page polls the
log's version twice a second on the GUI thread and redraws only when it grew, so the window never
waits on the server.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QDialog, QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from desktop_app.server.request_log import ApiRequest
from desktop_app.ui.engine.api_server import ApiServer

POLL_MS = 500
COLUMNS = ("Time", "Endpoint", "Model", "Prompt tokens", "Answer tokens", "Tokens/s", "Status", "Duration")


def cells(entry: ApiRequest) -> tuple[str, ...]:
    """One request's row as the page shows it."""
    counted = entry.prompt_tokens or entry.answer_tokens
    return (
        time.strftime("%H:%M:%S", time.localtime(entry.at)),
        f"{entry.method} {entry.endpoint}",
        entry.model or "—",
        f"{entry.prompt_tokens:,}" if counted else "—",
        f"{entry.answer_tokens:,}" if counted else "—",
        f"{entry.tokens_per_s:.1f}" if entry.tokens_per_s else "—",
        str(entry.status),
        f"{entry.duration_s * 1000:.0f} ms" if entry.duration_s < 1 else f"{entry.duration_s:.1f} s",
    )


class ApiRequestsPage(QDialog):
    """The table of the API's last requests and a line saying whether the API is on."""

    def __init__(self, api: ApiServer, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("apiRequestsPage")
        self.setWindowTitle("API requests")
        self._api = api
        self._shown = -1
        self.note = QLabel()
        self.note.setObjectName("apiRequestsNote")
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("apiRequestsTable")
        self.table.setAccessibleName("The API's last requests, newest first")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self.refresh)
        self.finished.connect(lambda _r: self._timer.stop())
        self.resize(860, 420)

    def show_live(self) -> None:
        """Show the page (beside the window, not blocking it) and keep it up to date."""
        self.refresh()
        self._timer.start()
        self.show()
        self.raise_()

    def refresh(self) -> None:
        log = self._api.counter.log
        kept = log.recent()
        if self._api.running:
            self.note.setText(f"Serving on {self._api.url} · the last {len(kept)} requests, newest first")
        else:
            self.note.setText("The API is off: Models → Serve API switches it on")
        if log.version == self._shown:
            return
        self._shown = log.version
        self.table.setRowCount(len(kept))
        for row, entry in enumerate(kept):
            for column, text in enumerate(cells(entry)):
                item = QTableWidgetItem(text)
                if column >= 3:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, column, item)


class _OpensOnClick(QObject):
    """Calls ``action`` when its watched widget is clicked (a status bar label, say)."""

    def __init__(self, widget: QWidget, action: Callable[[], object]) -> None:
        super().__init__(widget)
        self._action = action
        widget.installEventFilter(self)
        widget.setCursor(Qt.CursorShape.PointingHandCursor)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.MouseButtonRelease and isinstance(event, QMouseEvent):
            if event.button() == Qt.MouseButton.LeftButton:
                self._action()
                return True
        return super().eventFilter(watched, event)


def open_on_click(widget: QWidget, api: ApiServer, parent: QWidget) -> None:
    """A click on ``widget`` (the status bar's API address) opens the page too."""
    widget.setToolTip("The API's last requests (also Models → API requests…)")
    _OpensOnClick(widget, lambda: open_api_page(api, parent))


def open_api_page(api: ApiServer, parent: QWidget) -> ApiRequestsPage:
    """The page (one per window, kept as the window's child), shown."""
    page = parent.findChild(ApiRequestsPage)
    if page is None:
        page = ApiRequestsPage(api, parent)
    page.show_live()
    return page
