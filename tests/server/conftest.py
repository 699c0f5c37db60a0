"""The real engine on the factory target, shared by the API tests of one module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from desktop_app.engine import Engine
from desktop_app.server.backend import EngineBackend


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
