"""The prompt cache: switching between conversations restores their KV states, exactly.

Conversation A, then B, then A's follow-up: the follow-up reads only its new turn (A's state is
restored from host memory) and says exactly what an engine without the cache says after reading
the whole prompt again. A small batch (``n_batch``) lets short prompts count as worth saving.

The small batch also keeps every prompt chunk within 65 rows, on the kernels a verify pass takes,
so a fresh read of the whole prompt computes what the restored state holds bit for bit. Chunks of
more rows are read by llamafile's kernels (packaging/llama/prefill-gemm.patch), and there the
cache's claim is that a restored follow-up equals the same follow-up on an undisturbed live cache
(both read only the new turn); a fresh read may part from it at a near-tie, as in llama.cpp.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from desktop_app.engine import Engine, GenerateRequest, ModelOptions
from desktop_app.engine.api import DRAFT_K, DrafterKind
from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.engine.events import Finished
from desktop_app.engine.llama.prompt_cache import PromptStore
from tests.helpers import run

N_BATCH = 32  # a prompt drops (or a restore spares) at least this many tokens to be saved (restored)
DOC_A = " ".join(f"Item {i}: the {w} fox jumps over {i % 7} lazy dogs." for i, w in enumerate(["red", "blue"] * 6))
DOC_B = " ".join(f"Line {i}: a {w} cat sleeps on {i % 5} warm mats." for i, w in enumerate(["grey", "white"] * 6))
K = DRAFT_K.default
GPU_LIKE = CostModel([0.010 * (1 + 0.02 * b) for b in range(K + 1)], 0.0005)  # Auto drafts with these


def _options(cache_mb: int) -> ModelOptions:
    return ModelOptions(n_ctx=1024, n_batch=N_BATCH, n_threads=1, prompt_cache_mb=cache_mb)


def _engine(target: Path, cache_mb: int, draft: Path | None = None) -> Engine:
    engine = Engine()
    engine.load_target(target, _options(cache_mb))
    if draft is not None:
        engine.load_draft(draft, _options(cache_mb))
    return engine


def _chat(doc: str, *turns: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": f"{doc}\n\nWhat is item 3?"},
    ] + [{"role": role, "content": text} for role, text in zip(["assistant", "user"] * 4, turns)]


def _a_b_a(engine: Engine, **kwargs: Any) -> tuple[Finished, Finished, Finished]:
    """A's first question, B's, then A's follow-up (with A's answer as the window sends it)."""
    a, _ = run(engine, messages=_chat(DOC_A), max_tokens=12, **kwargs)
    b, _ = run(engine, messages=_chat(DOC_B), max_tokens=12, **kwargs)
    again, _ = run(engine, messages=_chat(DOC_A, a.text, "And item 5?"), max_tokens=16, **kwargs)
    return a, b, again


# ---------------------------------------------------------------------- the store alone
def _state(n: int) -> np.ndarray:
    return np.zeros(n, np.uint8)


def test_the_store_evicts_oldest_first_and_never_holds_more_than_its_budget() -> None:
    store = PromptStore(budget=250)
    for i in range(6):
        assert store.add([i, i + 1, i + 2], _state(100))
        assert store.usage().bytes <= 250
    assert [e.tokens[0] for e in store.entries()] == [4, 5]  # the two newest
    store.used(store.entries()[0])  # 4 is now the most recent: 5 goes first
    store.add([9], _state(100))
    assert [e.tokens[0] for e in store.entries()] == [4, 9]
    assert not store.add([7], _state(251))  # larger than the whole budget: not kept, nothing evicted
    assert store.usage() == dataclasses.replace(store.usage(), entries=2, bytes=200, budget=250)


def test_a_budget_of_zero_keeps_nothing() -> None:
    store = PromptStore(budget=0)
    assert not store.enabled
    assert not store.add([1, 2, 3], _state(1))
    assert store.usage().entries == 0 and store.best([1, 2, 3], 3) is None


def test_the_longest_shared_prefix_wins_and_a_longer_state_replaces_its_prefix() -> None:
    store = PromptStore(budget=1000)
    store.add([1, 2, 3], _state(10))
    store.add([1, 2, 9, 9], _state(10))
    store.add([1, 2, 3, 4, 5], _state(10))  # serves everything [1, 2, 3] served
    assert [e.tokens for e in store.entries()] == [(1, 2, 9, 9), (1, 2, 3, 4, 5)]
    found = store.best([1, 2, 3, 4, 7], limit=10)
    assert found is not None and found[0].tokens == (1, 2, 3, 4, 5) and found[1] == 4
    assert store.best([1, 2, 3, 4, 7], limit=3)[1] == 3  # type: ignore[index]  # the caller's limit


def test_a_recurrent_state_serves_only_prompts_that_start_with_all_of_it() -> None:
    store = PromptStore(budget=1000, whole_only=True)
    store.add([1, 2, 3], _state(10))
    store.add([1, 2, 3, 4, 5], _state(10))  # a recurrent state cannot be cut: both stay
    assert len(store.entries()) == 2
    assert store.best([1, 2, 3, 4, 9], limit=10)[0].tokens == (1, 2, 3)  # type: ignore[index]
    assert store.best([1, 2, 7], limit=10) is None
    assert store.best([1, 2, 3, 4, 5], limit=4)[0].tokens == (1, 2, 3)  # type: ignore[index]


# ---------------------------------------------------------------------- with real models
@pytest.fixture(scope="module")
def cached(default_model: Path) -> Iterator[Engine]:
    engine = _engine(default_model, cache_mb=64)
    engine.use_costs(DrafterKind.NGRAM, K, GPU_LIKE)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def uncached(default_model: Path) -> Iterator[Engine]:
    engine = _engine(default_model, cache_mb=0)
    engine.use_costs(DrafterKind.NGRAM, K, GPU_LIKE)
    yield engine
    engine.close()


@pytest.mark.parametrize("spec", ["off", "on", "auto"])
def test_a_follow_up_after_another_conversation_is_restored_and_exact(
    cached: Engine, uncached: Engine, spec: str
) -> None:
    kwargs = {"spec": spec, "drafter": "ngram"}
    _, _, fast = _a_b_a(cached, **kwargs)
    _, _, fresh = _a_b_a(uncached, **kwargs)
    assert fast.token_ids == fresh.token_ids and fast.text == fresh.text
    assert spec == "off" or fast.stats.drafted > 0
    assert fresh.stats.prompt_tokens_new > fresh.stats.prompt_tokens - 20  # B's cache shared only the system prompt
    assert fast.stats.prompt_tokens == fresh.stats.prompt_tokens
    # only the follow-up's turn is read; A's document, question and answer came back from memory
    assert fast.stats.prompt_tokens_new < N_BATCH and fast.stats.prompt_tokens > 6 * N_BATCH, fast.stats.to_dict()
    assert uncached.target is not None and uncached.target.prompt_store.usage().entries == 0


def test_the_follow_up_reuses_the_answer_tokens_after_another_conversation(cached: Engine) -> None:
    """Several answers are remembered as tokens, so A's answer keeps the ids it was generated as."""
    prompt_a, _ = cached.build_prompt(GenerateRequest(messages=_chat(DOC_A)))
    a, b, _ = _a_b_a(cached, spec="off")
    follow_up, _ = cached.build_prompt(GenerateRequest(messages=_chat(DOC_A, a.text, "And item 5?")))
    assert follow_up[: len(prompt_a) + len(a.token_ids)] == prompt_a + a.token_ids


def test_usage_reports_what_the_store_holds(cached: Engine) -> None:
    _a_b_a(cached, spec="off")
    usage = cached.models.prompt_cache_usage()
    assert usage.entries >= 1 and 0 < usage.bytes <= usage.budget == 64 << 20
    assert usage.tokens >= len(cached.build_prompt(GenerateRequest(messages=_chat(DOC_B)))[0]) - 1


def test_a_draft_model_pair_restores_both_contexts_exactly(models: Any) -> None:
    fast_engine = _engine(models.target, 64, models.draft)
    fresh_engine = _engine(models.target, 0, models.draft)
    try:
        for spec in ("off", "on"):
            _, _, fast = _a_b_a(fast_engine, spec=spec, drafter="model", draft_max=4)
            _, _, fresh = _a_b_a(fresh_engine, spec=spec, drafter="model", draft_max=4)
            assert fast.token_ids == fresh.token_ids and fast.text == fresh.text
            assert fast.stats.prompt_tokens_new < N_BATCH < 6 * N_BATCH < fresh.stats.prompt_tokens_new
        assert fast.stats.drafted > 0
        draft = fast_engine.draft
        assert draft is not None and draft.prompt_store.restored > 0  # type: ignore[union-attr]
    finally:
        fast_engine.close()
        fresh_engine.close()


@pytest.mark.parametrize("name", ["hybrid", "no_rollback"])
def test_a_recurrent_target_restores_a_state_whose_tokens_start_the_prompt(hybrid_models: Any, name: str) -> None:
    """A recurrent or hybrid cache keeps one state for all its tokens: A's state is restored when
    A's follow-up starts with all of it (its prompt and answer), and the answer is unchanged."""
    path = getattr(hybrid_models, name)
    fast_engine, fresh_engine = _engine(path, 64), _engine(path, 0)
    try:
        _, _, fast = _a_b_a(fast_engine, spec="off")
        _, _, fresh = _a_b_a(fresh_engine, spec="off")
        assert fast.token_ids == fresh.token_ids and fast.text == fresh.text
        assert fast.stats.prompt_tokens_new < N_BATCH < 6 * N_BATCH < fresh.stats.prompt_tokens_new
        assert fast_engine.target is not None and fast_engine.target.prompt_store.whole_only
    finally:
        fast_engine.close()
        fresh_engine.close()


def test_an_entry_evicted_while_it_is_restored_stays_out() -> None:
    store = PromptStore(budget=100)
    store.add([1, 2, 3], _state(60))
    found = store.best([1, 2, 3, 4], limit=4)
    assert found is not None
    store.add([7, 8, 9], _state(60))  # the live cache saved before the restore evicts it
    store.used(found[0])
    assert [e.tokens for e in store.entries()] == [(7, 8, 9)] and store.restored == 1
