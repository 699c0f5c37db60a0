"""Copies drafted up to 64 tokens a pass: the length comes from the evidence of the copy so far
(its run, or the context's agreement with an earlier request), each pass is sized by what its
rows cost, and calibration times the long passes it plans with."""

from __future__ import annotations

from desktop_app.engine.api import DRAFT_K
from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.engine.auto.policy import AutoPolicy, RunTracker
from desktop_app.engine.auto.setup import timed_sizes
from desktop_app.engine.drafters import CopySource

COPY_MAX = DRAFT_K.high
# A memory-bound GPU: a pass of 65 rows costs about one row's.
GPU = CostModel([0.010 * (1 + 0.003 * b) for b in range(COPY_MAX + 1)], 2e-5)
# This project's 2-core CPU with its batch-rows kernels: 9 rows cost about 4x one, then about
# 0.3x a token per row more (the calibration's 13-row pass at 5.2x; 65 rows about 16x).
CPU = CostModel([0.010 * (1 + 0.37 * b) if b < 9 else 0.010 * (3.96 + 0.3 * (b - 8)) for b in range(COPY_MAX + 1)], 0)


def _copy_passes(costs: CostModel, tokens: int, held: int) -> list[int]:
    """The drafts of an answer that copies ``tokens`` tokens of an earlier request, which the
    context agrees with for ``held`` tokens, every draft accepted."""
    policy = AutoPolicy(costs, k_max=COPY_MAX, probe=False, runs=RunTracker())
    done, drafts = 0, []
    while done < tokens:
        k = policy.offer(min(COPY_MAX, tokens - done), CopySource.EARLIER, held)[0]
        drafts.append(k)
        if k:
            policy.observe(k, k, 0.0, costs.target_batch_s[k], k + 1, CopySource.EARLIER)
        policy.observe_shadow(1, 1, CopySource.EARLIER)  # the target's token, as copied
        done += k + 1
    return drafts


def test_a_request_sent_again_is_drafted_long_from_its_first_token_on_a_gpu() -> None:
    again = _copy_passes(GPU, 200, held=COPY_MAX)
    assert again[0] > DRAFT_K.default  # from the answer's first token
    assert max(again) == COPY_MAX and len(again) <= 6
    # the same copy without the context's agreement as evidence: it must prove itself first
    fresh = _copy_passes(GPU, 200, held=0)
    assert fresh[0] < again[0] // 2 and len(fresh) > len(again)


def test_on_a_cpu_a_long_copy_is_verified_in_passes_its_costs_make_best() -> None:
    """A 65-row pass costs 16x a token here: a copy goes in passes of tens of rows (chunks of
    the copy, the next one looked up again after each), longer as the copy keeps holding, and
    never longer than the copy's rate pays for (on the GPU the first pass is longer)."""
    drafts = _copy_passes(CPU, 200, held=COPY_MAX)
    assert drafts[0] < _copy_passes(GPU, 200, held=COPY_MAX)[0]
    assert drafts == sorted(drafts[:-1]) + drafts[-1:]  # longer while it holds (the last: the copy's end)
    assert max(drafts) > 2 * DRAFT_K.default
    assert sum(k + 1 for k in drafts) / len(drafts) > 2 * DRAFT_K.default  # tokens per pass


def test_calibration_times_every_short_pass_and_long_ones_at_doublings() -> None:
    assert timed_sizes(8) == list(range(1, 10))
    assert timed_sizes(3) == [1, 2, 3, 4]
    assert timed_sizes(COPY_MAX) == [*range(1, 10), 17, 33, 65]
    assert timed_sizes(12) == [*range(1, 10), 13]
