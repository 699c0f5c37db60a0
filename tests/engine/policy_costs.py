"""The cost tables and bars the Auto policy tests judge by: measured decode costs of a CPU and a GPU."""

from __future__ import annotations

from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.engine.auto.tunables import DEFAULT_TUNABLES

MIN_GAIN = DEFAULT_TUNABLES.min_gain

# This project's CPU: a decode of b tokens costs about these multiples of one token.
CPU_BATCH = [1.0, 1.8, 2.4, 3.6, 4.9, 5.8, 6.6, 7.5, 8.0]
# The same CPU and model with our batch-rows kernels, as the drafter bench calibrated them.
CPU_BATCH_ROWS = [1.0, 1.59, 1.83, 2.08, 2.62, 2.98, 3.44, 3.71, 3.92]
# A memory-bound GPU: verifying up to 9 tokens costs about one token.
GPU_BATCH = [1.0, 1.02, 1.04, 1.06, 1.08, 1.1, 1.12, 1.14, 1.16]


def costs(batch: list[float], draft_ratio: float) -> CostModel:
    unit = 0.010
    return CostModel([b * unit for b in batch], draft_ratio * unit)
