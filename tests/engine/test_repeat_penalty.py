"""The repeat penalty: llama.cpp's penalties sampler, the same for plain and speculative decoding."""

from __future__ import annotations

import numpy as np
import pytest

from desktop_app.engine import Engine
from desktop_app.engine.api import REPEAT_LAST_N, REPEAT_PENALTY, SamplingParams
from desktop_app.engine.drafters import Draft
from desktop_app.engine.loop.generator import verify
from desktop_app.engine.loop.target_rows import PlainRows
from desktop_app.engine.sampling import penalize, probabilities
from desktop_app.engine.sampling_noise import SamplingNoise
from tests.helpers import assert_same_distribution, assert_verified_three_positions, run, sample_sequences, user

PROMPT = "List the days of the week, then list them again in the same order."


def test_the_penalty_divides_positive_and_multiplies_negative_scores_of_recent_tokens() -> None:
    logits = np.array([2.0, -1.0, 3.0, 0.5], dtype=np.float32)
    params = SamplingParams(repeat_penalty=2.0, repeat_last_n=3)
    # token 3 is outside the last 3; token 0 is penalised once although seen twice
    out = penalize(logits, params, [3, 0, 0, 1])
    assert out.tolist() == [1.0, -2.0, 3.0, 0.5]
    assert penalize(logits, SamplingParams(), [0, 1]) is logits  # 1.0: off
    assert penalize(logits, SamplingParams(repeat_penalty=2.0, repeat_last_n=0), [0]) is logits
    probs = probabilities(logits, SamplingParams(temperature=1.0, repeat_penalty=2.0), [2])
    assert probs.argmax() == 0  # token 2 led, its score halved it falls behind token 0


def test_the_ranges_are_declared_once() -> None:
    assert SamplingParams().repeat_penalty == REPEAT_PENALTY.default == 1.0
    assert SamplingParams().repeat_last_n == REPEAT_LAST_N.default
    with pytest.raises(ValueError, match="repeat_penalty must be between 0.1 and 10.0"):
        SamplingParams(repeat_penalty=0.0)


@pytest.mark.parametrize("drafter", ["model", "ngram"])
def test_the_penalty_changes_greedy_output_and_speculation_keeps_it(pair_engine: Engine, drafter: str) -> None:
    plain, _ = run(pair_engine, messages=user(PROMPT), max_tokens=64, spec="off")
    penalised = SamplingParams(repeat_penalty=1.5)
    off, _ = run(pair_engine, messages=user(PROMPT), max_tokens=64, spec="off", sampling=penalised)
    on, _ = run(
        pair_engine, messages=user(PROMPT), max_tokens=64, spec="on", draft_max=4, drafter=drafter, sampling=penalised
    )
    assert off.token_ids != plain.token_ids  # the penalty changes what greedy decoding says
    assert on.token_ids == off.token_ids and on.text == off.text  # lossless with the penalty on
    if drafter == "model":  # the draft model drafts every cycle (the penalised output repeats too little to look up)
        assert on.stats.accepted > 0 and on.stats.accepted < on.stats.drafted


class _Rows:
    """The target's logits rows for one verify pass (all verify reads of the model)."""

    def __init__(self, rows: list[list[float]]) -> None:
        self.rows = np.array(rows, dtype=np.float32)

    def logits(self, i: int) -> np.ndarray:
        return self.rows[i]


def test_verify_penalises_each_row_for_the_drafts_before_it() -> None:
    # row 0 picks token 1 (the draft); row 1 would pick token 1 again, but token 1 is now
    # among the recent tokens: penalised, token 2 wins, as plain decoding would have chosen
    rows = _Rows([[0.0, 3.0, 2.0], [0.0, 3.0, 2.0], [5.0, 0.0, 0.0]])
    params = SamplingParams(repeat_penalty=2.0)
    noise = SamplingNoise(0)
    draft = Draft(tokens=[1, 1])
    tokens, kept = verify(draft, PlainRows(rows, params, [0], draft.tokens), noise)  # type: ignore[arg-type]
    assert (tokens, kept) == ([1, 2], 1)
    # with the committed context holding token 1, row 0 rejects the draft at once
    tokens, kept = verify(draft, PlainRows(rows, params, [1], draft.tokens), noise)  # type: ignore[arg-type]
    assert (tokens, kept) == ([2], 0)


def test_sampled_speculation_with_the_penalty_keeps_the_target_distribution(pair_engine: Engine) -> None:
    """Chi-square, as test_lossless does for sampling: with the penalty on, drafted answers are
    distributed as plain ones (the drafts and every verified row penalised alike)."""
    # below 1 the penalty favours recent tokens (llama.cpp allows it): here it always acts, on the
    # prompt's tokens and on each drafted token at the rows after it
    params = {"temperature": 1.5, "top_k": 3, "repeat_penalty": 0.5}
    n = 500
    plain = sample_sequences(pair_engine, "off", n, params, "model")
    cycles: list[tuple[int, int]] = []
    spec = sample_sequences(pair_engine, "on", n, params, "model", cycles)
    assert_verified_three_positions(cycles, n)
    assert_same_distribution(plain, spec)
    unpenalised = sample_sequences(pair_engine, "off", n, {"temperature": 1.5, "top_k": 3}, "model")
    assert unpenalised != plain  # the penalty is at work in these answers
