from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy import stats as scistats

from desktop_app.engine.sampling import SamplingParams, probabilities
from desktop_app.engine.sampling_noise import SamplingNoise


def test_transforms_keep_only_allowed_tokens() -> None:
    logits = np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.0])
    p = probabilities(logits, SamplingParams(temperature=1.0, top_k=3))
    assert np.count_nonzero(p) == 3 and p.sum() == pytest.approx(1.0)
    p = probabilities(logits, SamplingParams(temperature=1.0, top_p=0.7))
    assert np.count_nonzero(p) == 2  # 0.636 < 0.7 <= 0.87
    p = probabilities(logits, SamplingParams(temperature=1.0, min_p=0.3))
    assert np.count_nonzero(p) == 2  # e^-1 = 0.37 >= 0.3 > e^-2


P = np.array([0.5, 0.3, 0.15, 0.05, 0.0])  # a token with no mass is never drawn


def _fits(picks: list[int], p: np.ndarray) -> float:
    """Chi-square goodness of fit of ``picks`` to ``p`` (its support): the p-value."""
    support = np.flatnonzero(p)
    counts = Counter(picks)
    assert set(counts) <= set(support.tolist())
    observed = np.array([counts[t] for t in support])
    return float(scistats.chisquare(observed, p[support] / p[support].sum() * len(picks)).pvalue)


def test_the_pick_at_each_position_is_a_draw_from_p_and_a_function_of_seed_and_position() -> None:
    """Across positions of one answer and across seeds at one position, the picks are distributed
    as p; the same (seed, position) always gives the same token. Noise that stopped depending on
    the position (or on the seed) would pick one token along the answer (or for every seed)."""
    n = 4000
    along = [SamplingNoise(7).pick(P, t) for t in range(n)]
    across = [SamplingNoise(seed).pick(P, 3) for seed in range(n)]
    assert _fits(along, P) > 0.001 and _fits(across, P) > 0.001
    assert [SamplingNoise(7).pick(P, t) for t in range(50)] == along[:50]
    assert SamplingNoise(7).after(20).pick(P, 5) == along[25]  # position = start + i
    # consecutive positions and seeds are not correlated: pairs are as often equal as chance says
    chance = float((P**2).sum())
    for picks in (along, across):
        same = np.mean([a == b for a, b in zip(picks, picks[1:])])
        assert abs(same - chance) < 0.03, same


def test_the_pick_is_the_gumbel_max_of_the_whole_support() -> None:
    """The race over the tokens that can still win picks what argmax(log p + g) over every
    token picks (distributions with zeros, flat and peaked ones)."""
    rng = np.random.default_rng(0)
    for trial in range(400):
        p = rng.dirichlet(np.full(300, [0.05, 0.5, 5.0][trial % 3]))
        p[rng.random(300) < 0.3] = 0.0
        p /= p.sum()
        noise = SamplingNoise(trial, start=trial * 3)
        support = np.flatnonzero(p)
        brute = int(support[np.argmax(np.log(p[support]) + noise.gumbel(2, support))])
        assert noise.pick(p, 2) == brute


def test_a_drafter_sharing_the_noise_agrees_as_often_as_its_distribution_allows() -> None:
    """The coupling: a drafter with the target's own distribution is always accepted; one with a
    different q is accepted when its Gumbel-max equals the target's, at least (1 - TV)/(1 + TV)
    of the time, and the kept token is the target's pick (distributed as p) either way."""
    q = np.array([0.1, 0.2, 0.3, 0.4, 0.0])
    n = 4000
    noises = [SamplingNoise(seed) for seed in range(n)]
    assert all(nz.pick(P, 0) == nz.pick(P.copy(), 0) for nz in noises[:200])
    agree = np.mean([nz.pick(P, 0) == nz.pick(q, 0) for nz in noises])
    tv = 0.5 * float(np.abs(P - q).sum())
    assert (1 - tv) / (1 + tv) - 0.02 < agree < 1 - tv + 0.02, agree  # maximal coupling: 1 - TV


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
