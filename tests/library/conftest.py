"""Fixtures for the model manager: a fake hub on 127.0.0.1 and a fresh models folder per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.library.hub_server import FakeHub

REPO = "specchat/tiny-GGUF"


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    server = FakeHub().start()
    yield server
    server.close()


@pytest.fixture
def models_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty models folder of its own (SPECCHAT_HOME points at the test's temp dir)."""
    monkeypatch.setenv("SPECCHAT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    from desktop_app import paths

    return paths.models_dir()
