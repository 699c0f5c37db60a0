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


def _measured_sizes() -> list[int]:
    """Per kept cost table: how many of its pass sizes were measured (seen) rather than taken
    from the prior; empty while none is kept."""
    path = paths.auto_costs_file()
    if not path.exists():
        return []
    tables = json.loads(path.read_text()).get("costs", {}).values()
    return [sum(1 for seen in table["seen"] if seen > 0) for table in tables]


def test_a_request_that_cuts_the_measuring_short_leaves_it_for_the_next_idle_moment(
    models: Any, fresh_home: None
) -> None:
    """An agent asks the moment `specchat serve` answers: the request stops the measuring after
    the load, and the answers plan with the prior. Before, it stayed so for the process's life,
    and the long passes the prior overrates were never tried, so never measured: a copy went in
    passes of 6 rows. Now the engine measures when it is next idle, every pass size a copy may
    take (1 to 65 rows)."""
    with engine_backend(Load(str(models.target), plan=AutoPlan(measure=True))) as backend:
        job = backend.submit(
            GenerateRequest(messages=[{"role": "user", "content": "Hi"}], max_tokens=4, spec=SpecMode.AUTO)
        )
        events = list(job.iterate())
        assert events and events[-1].stats.generated_tokens >= 1
        deadline = time.monotonic() + 120
        while max(_measured_sizes(), default=0) < 65 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert max(_measured_sizes(), default=0) == 65, f"measured sizes per table: {_measured_sizes()}"
