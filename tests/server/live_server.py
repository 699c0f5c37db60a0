"""A real uvicorn server on a free port (the one ``specchat serve`` runs), and a recorder of
what the server logs, for the API tests."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from desktop_app.engine_process.client import EngineProcess
from desktop_app.engine_process.protocol import Load
from desktop_app.server.app import create_app
from desktop_app.server.backend import GenerationBackend
from desktop_app.server.engine_backend import EngineBackend
from desktop_app.server.http_server import make_server
from desktop_app.server.limits import DEFAULT_LIMITS, ServerLimits


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def engine_backend(load: Load, **options: object) -> Iterator[EngineBackend]:
    """The API's backend over a real engine process with ``load`` loaded, as `specchat serve`
    makes it (``options``: EngineBackend's, e.g. ``max_waiting``)."""
    engine = EngineProcess()
    try:
        engine.load_and_wait(load, timeout=300)
        backend = EngineBackend(engine, **options)  # type: ignore[arg-type]
        try:
            yield backend
        finally:
            backend.close()
    finally:
        engine.shutdown()


class Server:
    def __init__(
        self, backend: GenerationBackend, api_key: str | None = None, limits: ServerLimits = DEFAULT_LIMITS
    ) -> None:
        self.port = free_port()
        self.app = create_app(backend, api_key, limits=limits)
        self.server = make_server(self.app, "127.0.0.1", self.port, limits)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started and time.time() < deadline:
            time.sleep(0.05)
        assert self.server.started
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/v1"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


class LogRecorder(logging.Handler):
    """Every record uvicorn, asyncio and the server log while attached. Attach it after the
    servers are made: each uvicorn config resets uvicorn's loggers."""

    NAMES = ("", "uvicorn", "uvicorn.error", "specchat.server")

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not any(r is record for r in self.records[-3:]):  # one record reaches it from each logger on its way up
            self.records.append(record)

    def __enter__(self) -> LogRecorder:
        for name in self.NAMES:
            logging.getLogger(name).addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        for name in self.NAMES:
            logging.getLogger(name).removeHandler(self)

    def tracebacks(self) -> list[str]:
        """What was logged with a traceback."""
        return [f"{r.name}: {r.getMessage()} {r.exc_info[1]!r}" for r in self.records if r.exc_info]
