"""The models people run in 2026: hybrid targets with rollback, built-in MTP heads, Gemma 4
assistants; a target that cannot roll back is refused speculation and still chats."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_app.engine import Engine, IncompatibleDraftError
from desktop_app.engine.api import DrafterKind
from desktop_app.engine.llama import llama_ext
from tests.helpers import assert_same_distribution, assert_verified_three_positions, run, sample_sequences, user

PROMPTS = [
    "Tell me a story about a robot.",
    "What is the capital of France?",
    "Write a Python function that reverses a list.",
    "List three colours.",
    "번역해 주세요: good morning",
]


@pytest.fixture(scope="module")
def mtp_engine(hybrid_models: Any) -> Iterator[Engine]:
    """The qwen35 hybrid target with its built-in MTP head, and a same-vocabulary qwen35 draft."""
    engine = Engine()
    engine.load_target(hybrid_models.hybrid_mtp)
    engine.load_draft(hybrid_models.draft)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def gemma4_engine(gemma4_pair: tuple[Path, Path]) -> Iterator[Engine]:
    engine = Engine()
    engine.load_target(gemma4_pair[0])
    engine.load_draft(gemma4_pair[1])
    yield engine
    engine.close()


def _identical_with_drafts(engine: Engine, drafter: str, k: int) -> None:
    for prompt in PROMPTS:
        plain, _ = run(engine, messages=user(prompt), max_tokens=48, spec="off")
        fast, _ = run(engine, messages=user(prompt), max_tokens=48, spec="on", draft_max=k, drafter=drafter)
        assert fast.token_ids == plain.token_ids, prompt
        assert fast.text == plain.text
        assert fast.stats.drafter == drafter
        assert fast.stats.drafted > 0 and 0 < fast.stats.accepted < fast.stats.drafted, prompt
        assert fast.stats.target_passes < plain.stats.target_passes
        assert max(n for n, _ in fast.stats.cycles) <= k


def test_the_hybrid_mtp_target_offers_its_own_drafter_first(mtp_engine: Engine) -> None:
    loaded = mtp_engine.loaded()
    assert loaded.speculation_refusal is None
    assert loaded.drafters == (
        DrafterKind.MTP,
        DrafterKind.MODEL,
        DrafterKind.NGRAM,
        DrafterKind.NGRAM_MAP,
        DrafterKind.NGRAM_CACHE,
    )
    assert "built-in MTP layers" in loaded.drafting_note and "rolls rejected drafts back" in loaded.drafting_note


@pytest.mark.parametrize("k", [2, 4])
def test_greedy_mtp_drafting_is_token_identical(mtp_engine: Engine, k: int) -> None:
    _identical_with_drafts(mtp_engine, "mtp", k)


def test_greedy_draft_model_on_a_hybrid_target_is_token_identical(mtp_engine: Engine) -> None:
    _identical_with_drafts(mtp_engine, "model", 3)


@pytest.mark.parametrize("k", [2, 4])
def test_greedy_gemma4_assistant_drafting_is_token_identical(gemma4_engine: Engine, k: int) -> None:
    assert gemma4_engine.drafters_available() == (
        DrafterKind.ASSISTANT,
        DrafterKind.NGRAM,
        DrafterKind.NGRAM_MAP,
        DrafterKind.NGRAM_CACHE,
    )
    _identical_with_drafts(gemma4_engine, "assistant", k)


@pytest.mark.parametrize("drafter", ["mtp", "assistant"])
def test_sampling_with_hidden_state_drafters_matches_sampling_without(
    mtp_engine: Engine, gemma4_engine: Engine, drafter: str
) -> None:
    engine = mtp_engine if drafter == "mtp" else gemma4_engine
    params = {"temperature": 1.5, "top_k": 2}
    n = 600
    plain = sample_sequences(engine, "off", n, params, drafter)
    cycles: list[tuple[int, int]] = []
    spec = sample_sequences(engine, "on", n, params, drafter, cycles)
    assert_verified_three_positions(cycles, n)
    assert_same_distribution(plain, spec)


def test_a_second_turn_on_the_hybrid_target_decodes_only_the_new_tokens(mtp_engine: Engine) -> None:
    first = user("Tell me about the sea and the wind.")
    answers = {}
    for spec in ("off", "on"):
        answer, _ = run(mtp_engine, messages=first, max_tokens=40, spec=spec, drafter="mtp")
        second = [*first, {"role": "assistant", "content": answer.text}, {"role": "user", "content": "And then?"}]
        follow_up, _ = run(mtp_engine, messages=second, max_tokens=40, spec=spec, drafter="mtp")
        s = follow_up.stats
        assert s.prompt_tokens > 60
        assert s.prompt_tokens_new <= 16, f"{spec}: re-decoded {s.prompt_tokens_new} of {s.prompt_tokens} tokens"
        answers[spec] = (answer.token_ids, follow_up.token_ids)
        if spec == "on":
            assert s.drafted > 0 and s.accepted > 0
    assert answers["on"] == answers["off"]  # both turns token-identical with and without MTP


def test_a_target_whose_cache_cannot_roll_back_that_far_starts_again_and_stays_exact(mtp_engine: Engine) -> None:
    # The same question twice: the cache holds question + answer, and dropping the answer is
    # more than the state snapshots allow; it is re-decoded, and the answer is the same.
    first, _ = run(mtp_engine, messages=user(PROMPTS[2]), max_tokens=30, spec="off")
    again, _ = run(mtp_engine, messages=user(PROMPTS[2]), max_tokens=30, spec="on", drafter="mtp")
    assert again.token_ids == first.token_ids
    assert again.stats.prompt_tokens_new == again.stats.prompt_tokens


def test_auto_drafts_with_the_mtp_layers_by_itself(mtp_engine: Engine) -> None:
    """Auto, no drafter named, plans with a GPU's costs (on this busy CPU measured costs make
    drafting a coin toss): it drafts with the target's own MTP layers."""
    import dataclasses

    from desktop_app.engine.api import DRAFT_FREE
    from desktop_app.engine.auto.setup import copy_limit
    from tests.engine.test_lossless import GPU_LIKE

    assert mtp_engine.target is not None
    for kind, k in ((DrafterKind.MTP, 8), *((free, copy_limit(mtp_engine.target)) for free in DRAFT_FREE)):
        mtp_engine.use_costs(kind, k, dataclasses.replace(GPU_LIKE, target_batch_s=GPU_LIKE.target_batch_s[: k + 1]))
    mtp_engine.ngrams.clear()  # nothing learned from earlier tests' answers competes with MTP here
    result, _ = run(mtp_engine, messages=user(PROMPTS[0]), max_tokens=32, spec="auto", draft_max=8)
    assert result.stats.drafter == "mtp"
    drafted, accepted = result.stats.by_drafter["mtp"]
    assert drafted > 0 and accepted > 0


def test_a_target_without_rollback_is_refused_in_one_line_and_chats(hybrid_models: Any) -> None:
    engine = Engine()
    try:
        engine.load_target(hybrid_models.no_rollback)
        refusal = engine.speculation_refusal()
        assert refusal is not None and "cannot roll back" in refusal and "\n" not in refusal
        assert engine.loaded().drafters == ()
        result, _ = run(engine, messages=user("Hello"), max_tokens=12, spec="on", drafter="ngram")
        assert result.stats.drafter == "none" and result.stats.drafted == 0
        assert len(result.token_ids) == 12
    finally:
        engine.close()


def test_an_assistant_for_another_architecture_is_a_clear_error(models: Any, gemma4_pair: tuple[Path, Path]) -> None:
    engine = Engine()
    try:
        engine.load_target(models.target)
        with pytest.raises(IncompatibleDraftError, match="needs a gemma4 target, not llama"):
            engine.load_draft(gemma4_pair[1])
        assert engine.draft is None
        result, _ = run(engine, messages=user("Hello"), max_tokens=8, spec="on", drafter="ngram")
        assert len(result.token_ids) == 8  # the engine is still fine
    finally:
        engine.close()


def test_the_mtp_extension_symbols_are_checked_with_a_clear_message(monkeypatch: pytest.MonkeyPatch) -> None:
    llama_ext.check()  # this llama-cpp-python has them all
    moved = llama_ext._Symbol(
        "void llama_set_embeddings_nextn(llama_context *, bool, bool)", "_Z99llama_set_embeddings_nextn_moved", (), None
    )
    monkeypatch.setitem(llama_ext.SYMBOLS, "llama_set_embeddings_nextn", moved)
    monkeypatch.setattr(llama_ext, "_resolved", {})
    with pytest.raises(
        llama_ext.LlamaExtError, match=r"llama-cpp-python 0\.3\.\d+ lacks .* llama_set_embeddings_nextn"
    ):
        llama_ext.check()
