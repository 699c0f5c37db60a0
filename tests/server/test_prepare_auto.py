"""`specchat serve` measures Auto's costs before the first request (as the window does after a
load), so the first client does not wait seconds for the measuring."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from desktop_app import paths
from desktop_app.engine.api import GenerateRequest, SpecMode
from desktop_app.engine_process.protocol import AutoPlan, Load
from tests.server.live_server import engine_backend


def _kept_costs() -> int:
    """How many cost tables the engine process has written down (0: none yet)."""
    path = paths.auto_costs_file()
    return len(json.loads(path.read_text()).get("costs", {})) if path.exists() else 0


@pytest.fixture()
def fresh_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECCHAT_HOME", str(tmp_path))  # the engine process inherits it: nothing measured yet


def test_the_engine_measures_auto_after_loading_before_any_request(models: Any, fresh_home: None) -> None:
    with engine_backend(Load(str(models.target), plan=AutoPlan(measure=True))) as backend:
        deadline = time.monotonic() + 120
        while not _kept_costs() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _kept_costs(), "Auto's costs were not measured before any request"
        job = backend.submit(
            GenerateRequest(messages=[{"role": "user", "content": "Hi"}], max_tokens=4, spec=SpecMode.AUTO)
        )
        events = list(job.iterate())
        assert events and events[-1].stats.generated_tokens >= 1
