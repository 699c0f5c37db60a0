"""Auto speculation's decisions, from injected costs and acceptance (pure functions): how many
tokens to draft, when drafting is off, and how it probes its way back. (Model-free copies,
judged by how long they have held: tests/engine/test_policy_copies.py.)"""

from __future__ import annotations

import pytest

from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.engine.auto.policy import (
    AutoPolicy,
    ProbeBackoff,
    RunTracker,
    best_k,
    expected_tokens,
)
from desktop_app.engine.auto.tunables import DEFAULT_TUNABLES
from tests.engine.policy_costs import CPU_BATCH, GPU_BATCH, costs


def _missing(k_max: int = 8) -> RunTracker:
    """A draft model's runs that keep missing at their first token."""
    run = RunTracker()
    for _ in range(20):
        run.observe(0, k_max, 0)
    return run


def test_expected_tokens_formula() -> None:
    assert expected_tokens(0.0, 4) == 1.0
    assert expected_tokens(1.0, 4) == 5.0
    assert expected_tokens(0.8, 4) == pytest.approx((1 - 0.8**5) / 0.2)


def test_gpu_with_good_acceptance_drafts_several_tokens() -> None:
    k, gain = best_k(0.8, costs(GPU_BATCH, 0.05))
    assert 4 <= k <= 8
    assert gain > 2.0


def test_cpu_with_a_draft_model_switches_speculation_off() -> None:
    k, gain = best_k(0.7, costs(CPU_BATCH, 0.1))
    assert (k, gain) == (0, 1.0)


def test_cheap_drafter_with_near_perfect_acceptance_pays_even_on_cpu() -> None:
    k, gain = best_k(0.97, costs(CPU_BATCH, 0.0))
    assert k >= 2 and gain > 1.0


def test_off_when_expected_speedup_is_below_one() -> None:
    for a in (0.0, 0.2, 0.4):
        assert best_k(a, costs(GPU_BATCH, 0.5))[0] == 0


def test_auto_switches_off_and_back_when_acceptance_recovers() -> None:
    policy = AutoPolicy(costs(GPU_BATCH, 0.05), k_max=8)
    assert policy.choose_k() > 0
    for _ in range(30):  # the draft keeps missing
        k = policy.choose_k()
        policy.observe(k, 0, k * 0.0005, GPU_BATCH[k] * 0.010, k + 1)
    assert policy.choose_k() == 0 or policy.probing
    assert "off" in policy.reason()
    # while off it probes now and then; when the probes hit, it switches back on
    ks = []
    for _ in range(200):
        k = policy.choose_k()
        ks.append(k)
        policy.observe(k, k, k * 0.0005, GPU_BATCH[k] * 0.010, k + 1)
        if k and not policy.probing:
            break
    # it was off, probed (spacing: test_probe_back_off_*, backed off by the misses' probes),
    # and the first probe taken whole turned it on
    assert ks[0] == 0 and 2 <= len(ks) <= 64 and ks[-2] == DEFAULT_TUNABLES.probe_k
    assert policy.choose_k() >= 2
    assert "predicted" in policy.reason()


def test_auto_adapts_k_to_acceptance() -> None:
    high = AutoPolicy(costs(GPU_BATCH, 0.05), k_max=8)
    for _ in range(20):
        high.observe(8, 8, 0.004, 0.0116, 9)
    low = AutoPolicy(costs(GPU_BATCH, 0.05), k_max=8)
    for _ in range(20):
        low.observe(4, 1, 0.002, 0.0108, 5)
    assert high.choose_k() > low.choose_k() > 0


def test_free_drafter_is_never_probed_while_off() -> None:
    policy = AutoPolicy(costs(CPU_BATCH, 0.0), k_max=8, probe=False)
    for _ in range(20):
        policy.observe_shadow(4, 0)  # prompt lookup keeps guessing wrong
    assert [policy.choose_k() for _ in range(300)] == [0] * 300
    for _ in range(10):
        policy.observe_shadow(8, 8)  # ... until the answer starts copying the prompt
    assert policy.choose_k() > 0


def test_a_new_answer_inherits_only_a_little_evidence() -> None:
    """A draft model's runs held for 40 drafts: the next answer starts from them, weighing no
    more than the prior, so three misses are enough to change its mind on this CPU."""
    run = RunTracker()
    first = AutoPolicy(costs(CPU_BATCH, 0.0), k_max=8, probe=False, model=run)
    for _ in range(40):
        first.observe(8, 8, 0.0, 0.08, 9)
    assert run.rate(20) > 0.95
    second = AutoPolicy(costs(CPU_BATCH, 0.0), k_max=8, probe=False, model=run, streak=40)  # a new answer
    assert all(r.trials <= DEFAULT_TUNABLES.prior_weight for r in run.rates())
    assert second.choose_k() > 0
    for _ in range(3):  # three misses
        second.observe(max(second.choose_k(), 1), 0, 0.0, 0.02, 9)
    assert second.choose_k() == 0


# ---------------------------------------------------------------- each mechanism, one test
# Each test below fails when its mechanism is removed (tried: one rate for every run length,
# probing every 8 cycles without back-off, min_gain = 1.0).


def test_after_a_full_accept_auto_drafts_more_than_after_a_miss() -> None:
    """Acceptance comes in runs: after a full accept the run goes on, with its own rate and k."""
    policy = AutoPolicy(costs(GPU_BATCH, 0.05), k_max=8)
    for _ in range(30):  # copied passages: full accepts follow full accepts, misses follow misses
        for _ in range(4):
            policy.observe(6, 6, 0.0, 0.07, 7)
        for _ in range(6):
            policy.observe(4, 0, 0.0, 0.05, 5)
    after_miss = policy.choose_k()
    policy.observe(4, 4, 0.0, 0.02, 5)
    after_full_accept = policy.choose_k()
    assert after_full_accept >= after_miss + 2
    assert "after a full accept" in policy.reason()


def test_probes_back_off_while_they_keep_missing() -> None:
    policy = AutoPolicy(costs(GPU_BATCH, 0.05), k_max=8)
    for _ in range(30):  # acceptance collapses: auto turns drafting off
        k = policy.choose_k()
        policy.observe(k, 0, k * 0.0005, 0.010, k + 1)
    probes = 0
    for _ in range(1000):
        k = policy.choose_k()
        probes += k > 0
        policy.observe(k, 0, k * 0.0005, 0.010 * (1 + 0.02 * k), k + 1)  # every probe misses
    # back-off 8, 16, ... 256 cycles: about ten probes in 1000 cycles, not one every 8 (125)
    assert 3 <= probes <= 12


def test_a_gain_within_the_cost_model_s_error_is_not_worth_drafting() -> None:
    # k = 1 with acceptance 0.5 on a free verify: 1.5 tokens per cycle for a 1.45 x cycle: 1.03x,
    # within what the cost model can tell (MIN_GAIN)
    barely = CostModel([0.010, 0.010], 0.0045)
    assert best_k(0.5, barely) == (0, 1.0)
    clearly = CostModel([0.010, 0.010], 0.002)  # 1.5 / 1.2 = 1.25x
    k, gain = best_k(0.5, clearly)
    assert k == 1 and gain == pytest.approx(1.5 / 1.2)


def test_probe_back_off_carries_over_to_the_next_answer() -> None:
    """A draft that does not pay here is not re-probed every 8 tokens in each new answer."""
    probes = ProbeBackoff()
    first = AutoPolicy(costs(CPU_BATCH, 0.5), k_max=4, model=_missing(4), probes=probes)
    for _ in range(100):
        k = first.choose_k()
        first.observe(k, 0, k * 0.005, 0.010, k + 1)  # every probe misses
    second = AutoPolicy(costs(CPU_BATCH, 0.5), k_max=4, model=_missing(4), probes=probes)
    first_probe = next(i for i in range(200) if second.choose_k() > 0)
    assert first_probe >= 16
