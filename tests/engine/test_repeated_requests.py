"""A request sent again (an agent retrying, a regenerate) is copied from the first token of its
answer: the engine's n-gram cache learned the first answer (what a long-running `specchat serve`
process keeps between requests), and Auto drafts the copy in runs longer than a model drafter's k."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from desktop_app.engine import Engine
from desktop_app.engine.api import DRAFT_FREE, DRAFT_K, GenerateRequest, SamplingParams, SpecMode
from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.engine.events import final_result
from desktop_app.engine.stats import GenerationStats

CODE_EDIT = (
    "Rename the variable items to orders and output the whole function:\n"
    "def total_price(items, tax_rate):\n"
    "    subtotal = sum(item.price * item.quantity for item in items)\n"
    "    return round(subtotal * (1 + tax_rate), 2)\n"
)


@pytest.fixture()
def engine(models: Any) -> Iterator[Engine]:
    """A fresh engine (nothing learned yet), as a new `specchat serve` process has. Costs of a
    memory-bound GPU (a pass of 65 rows costs about one row's), so Auto drafts as far as the
    evidence of a copy carries it; on the factory model's CPU costs it drafts nothing."""
    engine = Engine()
    engine.load_target(models.target)
    gpu = CostModel([0.010 + 0.0002 * b for b in range(DRAFT_K.high + 1)], 2e-5)
    for kind in DRAFT_FREE:
        engine.use_costs(kind, DRAFT_K.high, gpu)
    yield engine
    engine.close()


def _ask(engine: Engine, spec: SpecMode) -> tuple[str, GenerationStats]:
    request = GenerateRequest(
        messages=[{"role": "user", "content": CODE_EDIT}], max_tokens=120, sampling=SamplingParams(0.0), spec=spec
    )
    done = final_result(engine.generate(request))
    return done.text, done.stats


def test_a_request_sent_again_is_drafted_in_long_runs_and_takes_few_passes(
    engine: Engine,
) -> None:
    first, first_stats = _ask(engine, SpecMode.AUTO)
    again, stats = _ask(engine, SpecMode.AUTO)
    plain, plain_stats = _ask(engine, SpecMode.OFF)
    assert first == again == plain  # greedy: the same text with and without drafts
    tokens = stats.generated_tokens
    assert tokens == plain_stats.generated_tokens > 60
    passes = stats.target_passes
    assert plain_stats.target_passes == tokens  # off: one pass a token
    assert passes * 4 <= first_stats.target_passes  # far fewer than the first time
    assert tokens / passes > DRAFT_K.default + 1  # passes of more tokens than a k = 8 draft gives
    # 120 tokens in 3 passes: copied from the answer's first token on, in runs of up to 64 (the
    # n-gram counts alone, which pick the copy up a few tokens in and rate it by its run so far,
    # take 5)
    assert passes <= 3
    assert stats.accepted >= tokens - passes


def test_the_cache_learns_each_answer_within_its_bound(engine: Engine) -> None:
    recent = engine.ngrams.recent
    assert len(recent) == 0
    _ask(engine, SpecMode.OFF)
    learned = len(recent)
    assert learned > 60  # the prompt and the answer, at once
    for _ in range(3):
        _ask(engine, SpecMode.OFF)
    assert len(recent) <= recent.max_tokens and recent.windows <= len(recent)
