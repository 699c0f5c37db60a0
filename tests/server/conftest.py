"""The real engine process on the factory target behind the API's one backend, shared by the API
tests of one module."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from desktop_app.engine import Engine
from desktop_app.engine.api import ModelOptions
from desktop_app.engine_process.protocol import AutoPlan, Load
from desktop_app.server.engine_backend import EngineBackend
from tests.server.live_server import Server, engine_backend


@pytest.fixture(scope="module")
def engine(models: Any) -> Iterator[Engine]:
    """An in-process engine on the served model, for what a test needs to know about the model
    (its tokens): the server's own engine runs in its process."""
    engine = Engine()
    engine.load_target(models.target)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def backend(models: Any) -> Iterator[EngineBackend]:
    with engine_backend(Load(str(models.target), plan=AutoPlan(measure=False))) as backend:
        yield backend


@contextmanager
def serving(path: Any, options: ModelOptions | None = None, key: str | None = None) -> Iterator[Server]:
    """A real server over a real engine process with ``path`` loaded, for one module's own model."""
    load = Load(str(path), options or ModelOptions(), plan=AutoPlan(measure=False))
    with engine_backend(load) as backend:
        served = Server(backend, key)
        try:
            yield served
        finally:
            served.stop()
