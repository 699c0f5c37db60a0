from __future__ import annotations

from collections.abc import Iterator

import pytest

from desktop_app.engine import Engine


@pytest.fixture(scope="module")
def pair_engine(models) -> Iterator[Engine]:
    """The factory target with its factory draft."""
    engine = Engine()
    engine.load_target(models.target)
    engine.load_draft(models.draft)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def default_engine(default_model) -> Iterator[Engine]:
    """The embedded SmolLM2-135M, no draft (prompt lookup drafts for it)."""
    engine = Engine()
    engine.load_target(default_model)
    yield engine
    engine.close()
