from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from desktop_app.engine.sampling import SamplingParams, accept_draft, probabilities


def test_transforms_keep_only_allowed_tokens() -> None:
    logits = np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.0])
    p = probabilities(logits, SamplingParams(temperature=1.0, top_k=3))
    assert np.count_nonzero(p) == 3 and p.sum() == pytest.approx(1.0)
    p = probabilities(logits, SamplingParams(temperature=1.0, top_p=0.7))
    assert np.count_nonzero(p) == 2  # 0.636 < 0.7 <= 0.87
    p = probabilities(logits, SamplingParams(temperature=1.0, min_p=0.3))
    assert np.count_nonzero(p) == 2  # e^-1 = 0.37 >= 0.3 > e^-2


@pytest.mark.parametrize("greedy_draft", [True, False])
def test_acceptance_rule_reproduces_the_target_distribution(greedy_draft: bool) -> None:
    """One position, many trials: the kept token is distributed as p whatever q is."""
    rng = np.random.default_rng(0)
    p = np.array([0.5, 0.3, 0.15, 0.05])
    q = np.array([0.1, 0.2, 0.3, 0.4])
    n = 40_000
    counts: Counter[int] = Counter()
    for _ in range(n):
        token = 3 if greedy_draft else int(rng.choice(4, p=q))
        ok, repl = accept_draft(p, None if greedy_draft else q, token, rng)
        counts[token if ok else repl] += 1
    observed = np.array([counts[i] for i in range(4)]) / n
    assert np.allclose(observed, p, atol=0.01), observed


def test_invalid_parameters_are_rejected() -> None:
    for bad in ({"temperature": -1}, {"top_p": 0.0}, {"top_k": -2}, {"min_p": 1.0}):
        with pytest.raises(ValueError):
            SamplingParams(**bad)


def test_common_prefix_matches_a_plain_scan() -> None:
    import random

    from desktop_app.engine.llama.model import common_prefix

    rng = random.Random(0)
    for _ in range(5000):
        a = [rng.randint(0, 2) for _ in range(rng.randint(0, 12))]
        b = a[: rng.randint(0, len(a))] + [rng.randint(0, 2) for _ in range(rng.randint(0, 5))]
        expected = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        assert common_prefix(a, b) == common_prefix(b, a) == expected
