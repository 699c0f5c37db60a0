"""The same seed gives the same text with speculation off, on (every drafter) and auto.

Each answer position's token is the Gumbel-max sample of the target's distribution with noise
made from (seed, position), and a draft is kept exactly when it is that token, so the drafts
change how fast the text comes, never which text (docs/drafting.md)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_app.engine import Engine
from desktop_app.engine.api import DRAFT_FREE, DrafterKind, SamplingParams
from tests.engine.test_lossless import GPU_LIKE
from tests.helpers import run, user

SEEDS = range(20)
PROMPT = "List the days of the week, then list them again in the same order."
# a sentence to repeat: SmolLM2 copies it, so the model-free drafters draft even at temperature 0.8
REWRITE = "Repeat this sentence exactly: The quick brown fox jumps over the lazy dog near the river bank."
K = 4


def _gpu_costs(engine: Engine, kinds: tuple[DrafterKind, ...]) -> None:
    """Auto plans with a memory-bound GPU's costs, so it drafts on this CPU too."""
    costs = dataclasses.replace(GPU_LIKE, target_batch_s=list(GPU_LIKE.target_batch_s[: K + 1]))
    for kind in kinds:
        engine.use_costs(kind, K, costs)


def _same_text_in_every_mode(
    engine: Engine, drafters: tuple[str, ...], prompt: str = PROMPT
) -> dict[str, tuple[int, int]]:
    """For each seed: off, on with each of ``drafters``, and auto give the same tokens. Returns
    (drafted, accepted) per mode over all seeds."""
    modes = [("on", d) for d in drafters] + [("auto", None)]
    drafts: dict[str, tuple[int, int]] = {}
    texts: set[str] = set()
    for seed in SEEDS:
        sampling = SamplingParams(temperature=0.8, seed=seed)
        plain, _ = run(engine, messages=user(prompt), max_tokens=32, spec="off", sampling=sampling)
        texts.add(plain.text)
        for spec, drafter in modes:
            fast, _ = run(
                engine, messages=user(prompt), max_tokens=32, spec=spec, drafter=drafter, draft_max=K, sampling=sampling
            )
            name = drafter or spec
            assert fast.token_ids == plain.token_ids, f"seed {seed}, {name}"
            assert fast.text == plain.text
            drafted, accepted = drafts.get(name, (0, 0))
            drafts[name] = (drafted + fast.stats.drafted, accepted + fast.stats.accepted)
    assert len(texts) >= len(SEEDS) // 2, "the seeds give different answers"
    return drafts


def test_a_draft_model_gives_the_seeds_text(pair_engine: Engine) -> None:
    _gpu_costs(pair_engine, (DrafterKind.MODEL, *DRAFT_FREE))
    drafts = _same_text_in_every_mode(pair_engine, ("model", "ngram-cache"))
    assert 0 < drafts["model"][1] < drafts["model"][0], drafts  # drafts kept and drafts refused
    # the drafter samples with the target's noise: it agrees about as often as p and q allow
    # (about two in three here; drawn with other noise, about 0.3)
    assert drafts["model"][1] > 0.55 * drafts["model"][0], drafts
    assert drafts["auto"][1] > 0, drafts


def test_the_model_free_drafters_give_the_seeds_text(default_engine: Engine) -> None:
    _gpu_costs(default_engine, DRAFT_FREE)
    drafts = _same_text_in_every_mode(default_engine, ("ngram", "ngram-map", "ngram-cache"), REWRITE)
    for name, (drafted, accepted) in drafts.items():
        assert drafted > 0 and accepted > 0, (name, drafts)  # each mode's drafts were put to the test


@pytest.fixture(scope="module")
def mtp_engine(hybrid_models: Any) -> Iterator[Engine]:
    engine = Engine()
    engine.load_target(hybrid_models.hybrid_mtp)
    yield engine
    engine.close()


def test_the_built_in_mtp_head_gives_the_seeds_text(mtp_engine: Engine) -> None:
    _gpu_costs(mtp_engine, (DrafterKind.MTP, *DRAFT_FREE))
    drafts = _same_text_in_every_mode(mtp_engine, ("mtp",))
    assert drafts["mtp"][1] > 0 and drafts["auto"][0] > 0, drafts


def test_a_gemma4_assistant_gives_the_seeds_text(gemma4_pair: tuple[Path, Path]) -> None:
    engine = Engine()
    try:
        engine.load_target(gemma4_pair[0])
        engine.load_draft(gemma4_pair[1])
        _gpu_costs(engine, (DrafterKind.ASSISTANT, *DRAFT_FREE))
        drafts = _same_text_in_every_mode(engine, ("assistant",))
    finally:
        engine.close()
    assert drafts["assistant"][1] > 0 and drafts["auto"][0] > 0, drafts


def test_without_a_seed_each_answer_draws_its_own(pair_engine: Engine) -> None:
    unseeded = SamplingParams(temperature=0.8)
    answers = [
        run(pair_engine, messages=user(PROMPT), max_tokens=16, spec="off", sampling=unseeded)[0] for _ in range(4)
    ]
    assert len({tuple(a.token_ids) for a in answers}) >= 3
