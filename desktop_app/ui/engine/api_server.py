"""The window's "Serve API" switch: the OpenAI-compatible API on the models the window loaded.

One engine, one queue: API requests go to the window's engine process, which answers in order,
so a chat in the window and API requests take turns. The HTTP server (uvicorn) runs on its own
thread with the same backend as `specchat serve` (server/engine_backend.py): requests reach the
engine process directly, never through the GUI thread.
"""

from __future__ import annotations

import socket
import threading
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from desktop_app.engine.api import API_HOST
from desktop_app.server.backend import Counter
from desktop_app.server.engine_backend import EngineBackend
from desktop_app.server.limits import DEFAULT_LIMITS
from desktop_app.ui.engine.engine_client import EngineClient

if TYPE_CHECKING:
    import uvicorn

SHUTDOWN_WAIT_S = DEFAULT_LIMITS.shutdown_grace_s + 1  # uvicorn's grace, then its own cancelling


class ApiServer(QObject):
    """Runs uvicorn on a thread for the window.

    Signals:
        started(str): the base URL the API answers on.
        stopped(): the server was switched off.
        failed(str): it could not start (the port is taken...).
    """

    started = Signal(str)
    stopped = Signal()
    failed = Signal(str)

    def __init__(self, client: EngineClient, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.backend = EngineBackend(client.process)
        self.counter = Counter()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self, port: int, api_key: str | None = None, host: str = API_HOST) -> bool:
        if self._server is not None:
            return True
        try:  # say "port taken" now, rather than from a thread that just dies
            with socket.socket() as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind((host, port))
        except OSError as exc:
            self.failed.emit(f"The API cannot listen on {host}:{port}: {exc.strerror or exc}")
            return False
        # Here, not at start-up: the window opens without the HTTP stack.
        from desktop_app.server.api_key import ApiKeyError, resolve_api_key
        from desktop_app.server.app import create_app
        from desktop_app.server.http_server import base_url, make_server

        try:  # the setting, else SPECCHAT_API_KEY, as for `specchat serve`
            key = resolve_api_key(api_key or None)
        except ApiKeyError as exc:
            self.failed.emit(f"The API was not started: {exc}")
            return False
        app = create_app(self.backend, key, self.counter)
        self._server = make_server(app, host, port)
        self._thread = threading.Thread(target=self._server.run, name="api-server", daemon=True)
        self._thread.start()
        self.url = base_url(host, port)
        self.started.emit(self.url)
        return True

    def stop(self) -> None:
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is not None:
            self.backend.close()  # every handler is answered now, not when its engine job would end
            # A graceful exit: uvicorn closes idle connections and waits for the handlers, which
            # end at once. force_exit would cancel them mid-await instead, each cancellation
            # printed as a CancelledError traceback.
            server.should_exit = True
            if thread is not None:
                thread.join(timeout=SHUTDOWN_WAIT_S)
            self.stopped.emit()
