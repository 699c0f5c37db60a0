"""Speculation never changes what the target would have said."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy import stats as scistats

from desktop_app.engine import Engine, GenerateRequest, SamplingParams
from desktop_app.engine.sampling import probabilities
from tests.helpers import run, user

PROMPTS = [
    "Tell me a story about a robot.",
    "What is the capital of France?",
    "Write a Python function that reverses a list.",
    "List three colours.",
    "번역해 주세요: good morning",
]

REWRITE_PROMPTS = [
    "Repeat this sentence exactly: The quick brown fox jumps over the lazy dog near the river bank.",
    "Fix the spelling in: 'I recieved the pakage yesterday and it was in good conditon.'",
    "Rewrite in uppercase: the meeting is moved to thursday at three in the afternoon.",
]


@pytest.mark.parametrize("prompt", PROMPTS)
@pytest.mark.parametrize("spec,k", [("on", 4), ("on", 2), ("auto", 4)])
def test_greedy_draft_model_output_is_token_identical(pair_engine: Engine, prompt: str, spec: str, k: int) -> None:
    plain, _ = run(pair_engine, messages=user(prompt), max_tokens=48, spec="off")
    fast, _ = run(pair_engine, messages=user(prompt), max_tokens=48, spec=spec, draft_max=k, drafter="model")
    assert fast.token_ids == plain.token_ids
    assert fast.text == plain.text
    if spec == "on":
        assert fast.stats.drafted > 0
        assert 0 < fast.stats.accepted < fast.stats.drafted  # the pair agrees often, not always
        assert fast.stats.target_passes < plain.stats.target_passes


@pytest.mark.parametrize("prompt", REWRITE_PROMPTS + PROMPTS[:2])
def test_greedy_prompt_lookup_on_default_model_is_token_identical(default_engine: Engine, prompt: str) -> None:
    plain, _ = run(default_engine, messages=user(prompt), max_tokens=40, spec="off")
    fast, _ = run(default_engine, messages=user(prompt), max_tokens=40, spec="on", draft_max=4, drafter="ngram")
    assert fast.token_ids == plain.token_ids
    assert fast.text == plain.text


def test_prompt_lookup_accepts_copied_text(default_engine: Engine) -> None:
    fast, _ = run(default_engine, messages=user(REWRITE_PROMPTS[0]), max_tokens=40, spec="on", drafter="ngram")
    assert fast.stats.accepted >= 5
    assert fast.stats.tokens_per_pass > 1.2


def _sample_sequences(engine: Engine, spec: str, n: int, params: dict) -> Counter[tuple[int, ...]]:
    counts: Counter[tuple[int, ...]] = Counter()
    for seed in range(n):
        result, _ = run(
            engine, messages=user("Say something."), max_tokens=2, spec=spec, draft_max=3, drafter="model",
            sampling=SamplingParams(seed=seed, **params),
        )
        counts[tuple(result.token_ids)] += 1
    return counts


def test_sampling_with_speculation_matches_sampling_without(pair_engine: Engine) -> None:
    """Chi-square over two-token sequences (top-k 3: at most 9 outcomes), 600 seeds per mode."""
    params = {"temperature": 1.5, "top_k": 3}
    n = 600
    plain = _sample_sequences(pair_engine, "off", n, params)
    spec = _sample_sequences(pair_engine, "on", n, params)
    outcomes = sorted(set(plain) | set(spec))
    assert len(outcomes) >= 4, "the setting should leave several outcomes"
    table = np.array([[plain[o] for o in outcomes], [spec[o] for o in outcomes]])
    table = table[:, table.sum(axis=0) >= 5]  # chi-square needs non-tiny expected counts
    _, p_value, _, _ = scistats.chi2_contingency(table)
    assert p_value > 0.001, f"distributions differ: {table.tolist()}"

    # Both match the target's exact first-token distribution (goodness of fit).
    prompt, _ = pair_engine.build_prompt(GenerateRequest(messages=user("Say something.")))
    target = pair_engine.target
    assert target is not None
    target.prefill(prompt)
    exact = probabilities(target.logits(-1).copy(), SamplingParams(**params))
    support = np.flatnonzero(exact)
    for counts in (plain, spec):
        first: Counter[int] = Counter()
        for seq, c in counts.items():
            first[seq[0]] += c
        observed = np.array([first[t] for t in support])
        assert observed.sum() == n
        _, p_fit = scistats.chisquare(observed, exact[support] * n)
        assert p_fit > 0.001, f"first token off the target's distribution: {observed} vs {exact[support] * n}"


def test_speculative_sampling_is_reproducible_with_a_seed(pair_engine: Engine) -> None:
    params = SamplingParams(temperature=0.8, top_p=0.9, seed=42)
    a, _ = run(pair_engine, messages=user("Hello"), max_tokens=24, spec="on", drafter="model", sampling=params)
    b, _ = run(pair_engine, messages=user("Hello"), max_tokens=24, spec="on", drafter="model", sampling=params)
    assert a.token_ids == b.token_ids
    assert a.stats.drafted > 0
