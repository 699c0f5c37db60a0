"""Auto's cost model following the machine: load, noise, stalls and thread counts (injected passes)."""

from __future__ import annotations

import dataclasses
import math
import re
import statistics

import pytest

from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.engine.auto.policy import AutoPolicy, RunTracker, best_k_for
from tests.engine.policy_costs import CPU_BATCH, GPU_BATCH, costs


def test_costs_follow_the_machine_when_passes_drift() -> None:
    """Load came: target passes take twice what calibration measured. Within some dozens of
    passes every cost follows (the batch sizes and the draft not measured lately too), and the
    reason says so; when the load leaves, they come back."""
    model = costs(CPU_BATCH, 0.3)
    calibrated = list(model.target_batch_s)
    policy = AutoPolicy(model, k_max=8)
    for _ in range(40):
        policy.observe(0, 0, 0.0, 2 * calibrated[0], 1)  # off: only single-token passes measured
    assert model.load == pytest.approx(2.0, rel=0.2)
    assert model.target_batch_s[8] == pytest.approx(2 * calibrated[8], rel=0.25)  # never measured
    assert model.draft_token_s == pytest.approx(2 * 0.3 * 0.010, rel=0.25)
    assert re.search(r"target passes now cost (1\.[89]|2\.[01])x the calibration", policy.reason())
    for _ in range(60):  # the load leaves
        policy.observe(0, 0, 0.0, calibrated[0], 1)
    assert model.load == pytest.approx(1.0, rel=0.2) and "calibration" not in policy.reason()


def test_a_noisy_machine_does_not_bend_the_costs_or_auto_s_choice() -> None:
    """Passes on a shared machine scatter by 30% around what they cost. The level of the costs
    follows, and the shape (what k rows cost against one) bends only slowly: so the k Auto drafts
    for a copy run stays one the calibration rates as fast as its best, pass after noisy pass.
    (Refining each batch size from single passes let the noise bend the shape, and Auto's k
    followed the noise.)"""
    import numpy as np

    from desktop_app.engine.auto.policy import RunTracker
    from desktop_app.engine.drafters import CopySource

    prompt = CopySource.PROMPT  # a copy the new answer trusts at once (see the test after next)

    measured = [1.0, 1.58, 2.08, 2.57, 3.23, 3.88, 4.39, 4.8, 5.38, 5.97, 6.49, 7.07, 7.6]
    model = costs(measured, 0.0)
    shape = [c / model.target_batch_s[0] for c in model.target_batch_s]
    run = RunTracker()
    for _ in range(20):
        run.observe(8, 12, 10, prompt)
    steady_costs = costs(measured, 0.0)
    steady = AutoPolicy(steady_costs, k_max=12, probe=False, runs=run, streak=8).offer(12, prompt)
    noisy = AutoPolicy(model, k_max=12, probe=False, runs=run, streak=8)
    rng = np.random.default_rng(7)
    choices: list[int] = []
    for i in range(400):
        for batch in (2 + (i * 5) % 12, 1):  # a verify pass, and the one-token pass after it
            noisy.observe(0, 0, 0.0, measured[batch - 1] * 0.010 * float(rng.lognormal(0.0, 0.3)), batch)
            choices.append(noisy.offer(12, prompt)[0])
    assert [c / model.target_batch_s[0] for c in model.target_batch_s] == pytest.approx(shape, rel=0.08)
    assert model.load == pytest.approx(1.0, abs=0.3)
    by_k = run.expected_by_k(8, 12, prompt)
    speed = [by_k[k] / steady_costs.cycle_s(k) for k in [steady[0], *choices]]  # at the true costs
    assert statistics.fmean(speed[1:]) >= 0.99 * speed[0]
    assert choices.count(steady[0]) >= 0.8 * len(choices)


def test_the_graph_rebuild_after_a_verify_pass_is_not_charged_to_plain_decoding() -> None:
    """A verify pass is judged with the one-token pass after it, which rebuilds llama.cpp's
    graph (the calibration charged that rebuild to the verify pass). Passes that cost what the
    calibration said leave every cost where it was; judged alone, the one-token pass would make
    plain decoding look 10% dearer, and drafts cheaper."""
    model = costs(CPU_BATCH, 0.0)
    calibrated = list(model.target_batch_s)
    policy = AutoPolicy(model, k_max=8)
    rebuild = 0.1 * calibrated[0]
    for _ in range(120):
        policy.observe(3, 1, 0.0, calibrated[3] - rebuild, 4)
        policy.observe(0, 0, 0.0, calibrated[0] + rebuild, 1)
        for _ in range(3):
            policy.observe(0, 0, 0.0, calibrated[0], 1)
    assert model.target_batch_s == pytest.approx(calibrated, rel=1e-9)


def test_given_costs_keep_their_shape() -> None:
    model = dataclasses.replace(costs(GPU_BATCH, 0.05), measured=False)
    before = list(model.target_batch_s)
    for _ in range(20):
        model.follow(1, 5 * before[0])
    assert model.target_batch_s == before and model.load == 1.0


def test_auto_plans_with_the_costs_of_the_thread_count_in_use() -> None:
    """On 2 cores a batch of 5 costs 2.6x one token with 2 threads but 3.5x with 1: when the
    engine drops to 1 thread (machine busy), Auto must not plan with 2-thread costs."""
    two = [0.010 * r for r in (1.0, 1.24, 1.68, 2.17, 2.57)]
    one = [0.013 * r for r in (1.0, 1.62, 2.17, 2.89, 3.47)]
    model = CostModel(list(two), 0.002, by_threads={1: list(one), 2: list(two)}, threads=2)
    run = RunTracker()
    for _ in range(6):
        run.observe(0, 4, 3)  # a draft model right three times in four
    policy = AutoPolicy(model, k_max=4, model=run)
    k_two = policy.choose_k()
    model.use_threads(1)
    assert model.target_batch_s == one
    policy.observe(0, 0, 0.0, one[0], 1)  # decides again with the new costs
    assert policy.choose_k() < k_two
    model.use_threads(2)
    assert model.target_batch_s == two


def test_a_noisy_machine_s_stalls_do_not_ratchet_the_draft_cost_until_auto_stops_drafting() -> None:
    """Hours of use on a machine whose passes scatter by 12% and that stalls now and then
    (a pass 60% slower, fading over a few dozen passes): 60,000 target passes later a drafted
    token costs what it did against a one-token pass, and a copy that holds 90% of the time is
    still drafted. A rescale moved the draft's cost with the table while the slow follow of
    the level did not, so each stall that faded left it raised: it reached a second a token
    and in the bench Auto stopped drafting for good in its 4th round."""
    import random

    rng = random.Random(1)
    calibrated = [6.48, 12.58, 14.41, 15.91, 18.51, 21.04, 21.7, 23.99, 26.64, 28.14, 29.21, 31.08, 34.48]  # ms
    model = CostModel([ms / 1e3 for ms in calibrated], 2e-5)
    stall = 1.0
    for _ in range(60_000):
        if rng.random() < 0.002:
            stall = 1.6
        stall = 1 + (stall - 1) * 0.93
        rows = 1 if rng.random() < 0.7 else rng.randint(2, 13)
        model.follow(rows, calibrated[rows - 1] / 1e3 * stall * math.exp(rng.gauss(0, 0.12)))
    ratio = (model.draft_token_s / model.target_batch_s[0]) / (2e-5 / (calibrated[0] / 1e3))
    assert 0.9 < ratio < 1.1
    assert best_k_for([1 + 0.9 * k for k in range(13)], model, 12)[0] >= 8
