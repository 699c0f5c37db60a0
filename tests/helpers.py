"""Small helpers shared by tests."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import numpy as np
from scipy import stats as scistats

from desktop_app.engine import Engine
from desktop_app.engine.api import GenerateRequest, SamplingParams
from desktop_app.engine.events import Finished, TextChunk, final_result


def run(engine: Engine, cancel: threading.Event | None = None, **kwargs: Any) -> tuple[Finished, list[TextChunk]]:
    """Generate to the end; return the Finished event and the text chunks seen."""
    if "messages" not in kwargs and "prompt" not in kwargs:
        kwargs["messages"] = [{"role": "user", "content": "Hello"}]
    chunks: list[TextChunk] = []
    return final_result(engine.generate(GenerateRequest(**kwargs), cancel), chunks.append), chunks


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def sample_sequences(
    engine: Engine,
    spec: str,
    n: int,
    params: dict[str, Any],
    drafter: str,
    cycles: list[tuple[int, int]] | None = None,
    draft_max: int = 3,
    max_tokens: int = 4,
) -> Counter[tuple[int, ...]]:
    """Four-token answers sampled with seeds 0..n-1 (k = 3: the first cycle verifies 3 drafts)."""
    counts: Counter[tuple[int, ...]] = Counter()
    for seed in range(n):
        result, _ = run(
            engine,
            messages=user("Say something."),
            max_tokens=max_tokens,
            spec=spec,
            draft_max=draft_max,
            drafter=drafter,
            sampling=SamplingParams(seed=seed, **params),
        )
        counts[tuple(result.token_ids)] += 1
        if cycles is not None:
            cycles.extend(result.stats.cycles)
    return counts


def assert_verified_three_positions(cycles: list[tuple[int, int]], n: int) -> None:
    """Every answer verified 3 drafted positions in one pass, and each position saw rejections."""
    assert sum(1 for drafted, _ in cycles if drafted == 3) >= n
    accepted_at = Counter(accepted for drafted, accepted in cycles if drafted == 3)
    assert all(accepted_at[i] > 0 for i in range(4)), f"rejections at every position and full accepts: {accepted_at}"


def assert_same_distribution(plain: Counter[tuple[int, ...]], spec: Counter[tuple[int, ...]]) -> None:
    """Chi-square: speculative sampling draws from the same distribution as plain sampling."""
    outcomes = sorted(set(plain) | set(spec))
    assert len(outcomes) >= 6, "the setting should leave several outcomes"
    table = np.array([[plain[o] for o in outcomes], [spec[o] for o in outcomes]])
    table = table[:, table.sum(axis=0) >= 5]  # chi-square needs non-tiny expected counts
    _, p_value, _, _ = scistats.chi2_contingency(table)
    assert p_value > 0.001, f"distributions differ: {table.tolist()}"
