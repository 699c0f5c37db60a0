"""The real engine on the factory target, shared by the API tests of one module."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from desktop_app.engine import Engine
from desktop_app.engine.api import ModelOptions
from desktop_app.server.backend import EngineBackend
from tests.server.live_server import Server


@pytest.fixture(scope="module")
def engine(models: Any) -> Iterator[Engine]:
    engine = Engine()
    engine.load_target(models.target)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def backend(engine: Engine) -> Iterator[EngineBackend]:
    backend = EngineBackend(engine)
    yield backend
    backend.close()


@contextmanager
def serving(path: Any, options: ModelOptions | None = None, key: str | None = None) -> Iterator[Server]:
    """A real server over a real engine with ``path`` loaded, for one module's own model."""
    engine = Engine()
    engine.load_target(path, options)
    backend = EngineBackend(engine)
    served = Server(backend, key)
    try:
        yield served
    finally:
        served.stop()
        backend.close()
        engine.close()
