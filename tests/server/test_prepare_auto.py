"""`specchat serve` measures Auto's costs before the first request (as the window does after a
load), so the first client does not wait seconds for the measuring."""

from __future__ import annotations

import time
from typing import Any

from desktop_app.engine import Engine
from desktop_app.engine.api import GenerateRequest, SpecMode
from desktop_app.server.backend import EngineBackend


def test_the_backend_measures_auto_before_any_request(models: Any) -> None:
    engine = Engine()
    engine.load_target(models.target)
    backend = EngineBackend(engine, prepare_auto=True)
    try:
        deadline = time.monotonic() + 120
        while not engine.auto.costs and time.monotonic() < deadline:
            time.sleep(0.05)
        assert engine.auto.costs, "Auto's costs were not measured before any request"
        measured = dict(engine.auto.costs)
        job = backend.submit(
            GenerateRequest(messages=[{"role": "user", "content": "Hi"}], max_tokens=4, spec=SpecMode.AUTO)
        )
        events = list(job.iterate())
        assert events and events[-1].stats.generated_tokens >= 1
        assert engine.auto.costs == measured  # the request used them; nothing was measured again
    finally:
        backend.close()
        engine.close()
