"""Speculation never changes what the target would have said."""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest
from scipy import stats as scistats

from desktop_app.engine import Engine, GenerateRequest, SamplingParams
from desktop_app.engine.api import DRAFT_K, DrafterKind
from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.engine.sampling import probabilities
from tests.helpers import run, sample_sequences, user

PROMPTS = [
    "Tell me a story about a robot.",
    "What is the capital of France?",
    "Write a Python function that reverses a list.",
    "List three colours.",
    "번역해 주세요: good morning",
]

# chat prompts on which prompt lookup finds something to copy (so the identity check bites)
CHAT_LOOKUP_PROMPTS = [
    "What is the capital of France?",
    "List the days of the week, then list them again in the same order.",
    "Explain what a list is in Python, with an example list and the same list printed.",
]

REWRITE_PROMPTS = [
    "Repeat this sentence exactly: The quick brown fox jumps over the lazy dog near the river bank.",
    "Fix the spelling in: 'I recieved the pakage yesterday and it was in good conditon.'",
    "Rewrite in uppercase: the meeting is moved to thursday at three in the afternoon.",
]


# A memory-bound GPU's costs (verifying k+1 tokens costs about one token): auto drafts with
# them, so the ("auto", k) cases check auto's own drafting, not plain decoding.
GPU_LIKE = CostModel([0.010 * (1 + 0.02 * b) for b in range(DRAFT_K.high + 1)], 0.0005)  # cut it to k + 1 rows


@pytest.mark.parametrize("prompt", PROMPTS)
@pytest.mark.parametrize("spec,k", [("on", 4), ("on", 2), ("auto", 4)])
def test_greedy_draft_model_output_is_token_identical(pair_engine: Engine, prompt: str, spec: str, k: int) -> None:
    if spec == "auto":
        pair_engine.use_costs(
            DrafterKind.MODEL, k, dataclasses.replace(GPU_LIKE, target_batch_s=GPU_LIKE.target_batch_s[: k + 1])
        )
    plain, _ = run(pair_engine, messages=user(prompt), max_tokens=48, spec="off")
    fast, _ = run(pair_engine, messages=user(prompt), max_tokens=48, spec=spec, draft_max=k, drafter="model")
    assert fast.token_ids == plain.token_ids
    assert fast.text == plain.text
    assert fast.stats.drafted > 0
    assert 0 < fast.stats.accepted < fast.stats.drafted  # the pair agrees often, not always
    assert fast.stats.target_passes < plain.stats.target_passes
    assert max(n for n, _ in fast.stats.cycles) <= k


@pytest.mark.parametrize("prompt", REWRITE_PROMPTS + CHAT_LOOKUP_PROMPTS)
def test_greedy_prompt_lookup_on_default_model_is_token_identical(default_engine: Engine, prompt: str) -> None:
    # long enough for each answer to repeat a run of 3+ tokens (prompt lookup's shortest match)
    plain, _ = run(default_engine, messages=user(prompt), max_tokens=100, spec="off")
    fast, _ = run(default_engine, messages=user(prompt), max_tokens=100, spec="on", draft_max=4, drafter="ngram")
    assert fast.token_ids == plain.token_ids
    assert fast.text == plain.text
    assert fast.stats.drafted > 0 and fast.stats.accepted > 0


def test_prompt_lookup_accepts_copied_text(default_engine: Engine) -> None:
    fast, _ = run(default_engine, messages=user(REWRITE_PROMPTS[0]), max_tokens=40, spec="on", drafter="ngram")
    assert fast.stats.accepted >= 5
    assert fast.stats.tokens_per_pass > 1.2


def _exact_answers(engine: Engine, params: SamplingParams, length: int) -> dict[tuple[int, ...], float]:
    """The target's own probability of each answer's first ``length`` tokens (an answer that ends
    sooner, with the model's end token, is the tokens before it)."""
    prompt, _ = engine.build_prompt(GenerateRequest(messages=user("Say something.")))
    target = engine.target
    assert target is not None
    exact: dict[tuple[int, ...], float] = {}
    todo: list[tuple[tuple[int, ...], float]] = [((), 1.0)]
    while todo:
        prefix, mass = todo.pop()
        target.prefill([*prompt, *prefix])
        probs = probabilities(target.logits(-1).copy(), params)
        for token in np.flatnonzero(probs):
            p, seq = mass * float(probs[token]), (*prefix, int(token))
            if target.is_eog(int(token)):
                exact[prefix] = exact.get(prefix, 0.0) + p
            elif len(seq) == length:
                exact[seq] = p
            else:
                todo.append((seq, p))
    return exact


@pytest.mark.parametrize("k", [1, 3, 8])
def test_sampling_with_speculation_draws_from_the_targets_distribution(pair_engine: Engine, k: int) -> None:
    """Chi-square of the first four tokens of 600 seeded answers (top-k 2: at most 16 outcomes)
    against the target's exact probabilities, the draft model drafting k at a time (its q differs
    from p: some drafts are refused at every position, some cycles keep all k)."""
    params = {"temperature": 1.5, "top_k": 2}
    n, length = 600, 4
    cycles: list[tuple[int, int]] = []
    counts = sample_sequences(pair_engine, "on", n, params, "model", cycles, draft_max=k, max_tokens=max(length, k + 1))
    drafted_k = Counter(accepted for drafted, accepted in cycles if drafted == k)
    assert sum(drafted_k.values()) >= n  # every answer's first cycle verified k drafts at once
    assert drafted_k[0] > 0 and drafted_k[k] > 0 and sum(drafted_k[i] for i in range(1, k)) >= (k > 1)
    first: Counter[tuple[int, ...]] = Counter()
    for seq, c in counts.items():
        first[seq[:length]] += c
    exact = _exact_answers(pair_engine, SamplingParams(**params), length)
    assert set(first) <= set(exact) and len(exact) >= 6
    outcomes = sorted(exact, key=exact.__getitem__, reverse=True)
    expected = np.array([exact[o] * n for o in outcomes])
    observed = np.array([first[o] for o in outcomes], dtype=float)
    small = expected < 5  # chi-square needs non-tiny expected counts: the rare outcomes as one
    expected = np.append(expected[~small], expected[small].sum())
    observed = np.append(observed[~small], observed[small].sum())
    _, p_fit = scistats.chisquare(observed, expected * observed.sum() / expected.sum())
    assert p_fit > 0.001, f"answers off the target's distribution: {observed} vs {expected}"


def test_speculative_sampling_is_reproducible_with_a_seed(pair_engine: Engine) -> None:
    params = SamplingParams(temperature=0.8, top_p=0.9, seed=42)
    a, _ = run(pair_engine, messages=user("Hello"), max_tokens=24, spec="on", drafter="model", sampling=params)
    b, _ = run(pair_engine, messages=user("Hello"), max_tokens=24, spec="on", drafter="model", sampling=params)
    assert a.token_ids == b.token_ids
    assert a.stats.drafted > 0
