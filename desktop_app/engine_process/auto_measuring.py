"""Auto's cost measurement in the engine process: right after a load, while the user types, and
again the next time the job queue is empty when a job cut it short (docs/auto.md, section 4)."""

from __future__ import annotations

import queue
import traceback
from typing import TYPE_CHECKING, Any

from desktop_app.engine_process.protocol import AutoPlan

if TYPE_CHECKING:  # the engine (and llama.cpp) loads in the engine process only, when it starts
    from desktop_app.engine import Engine


class AutoMeasuring:
    """Measures Auto's costs for the load's plan, giving way to any job between two timed passes.
    Left undone, the answers would plan with the prior for the process's life, and the long passes
    the prior overrates were never tried, so never measured: a client that asked at once, as an
    agent does after starting `specchat serve`, got copies in passes of 6 rows where 33 paid."""

    def __init__(self, engine: Engine, jobs: queue.Queue[Any]) -> None:
        self.engine = engine
        self.jobs = jobs
        self.unmeasured: AutoPlan | None = None  # the plan still to measure (None: done, or nothing to)

    def after_load(self, plan: AutoPlan) -> None:
        self.unmeasured = None
        if plan.measure:
            self.measure(plan)

    def when_idle(self) -> None:
        """Take the measuring up again if a job cut it short and the queue is empty now."""
        if self.unmeasured is not None and self.jobs.empty():
            self.measure(self.unmeasured)

    def measure(self, plan: AutoPlan) -> None:
        self.unmeasured = plan
        try:
            costs = self.engine.prepare_auto(plan.drafter, plan.draft_max, should_stop=lambda: not self.jobs.empty())
        except Exception:  # noqa: BLE001 - auto measures lazily on first use instead
            traceback.print_exc()
            self.unmeasured = None
            return
        if costs is not None or self.jobs.empty():  # measured, or nothing to measure
            self.unmeasured = None
