"""The model-free drafters on the embedded model: each keeps greedy output token-identical to
plain decoding while its drafts are accepted, and Auto switches among them within an answer."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from desktop_app.engine import Engine
from desktop_app.engine.api import DrafterKind
from tests.engine.test_lossless import GPU_LIKE, REWRITE_PROMPTS
from tests.helpers import run, user

COPY = REWRITE_PROMPTS[0]


@pytest.fixture()
def engine(default_model) -> Iterator[Engine]:
    engine = Engine()
    engine.load_target(default_model)
    yield engine
    engine.close()


@pytest.mark.parametrize("drafter", ["ngram", "ngram-map"])
def test_context_drafters_are_lossless_and_accepted(engine: Engine, drafter: str) -> None:
    plain, _ = run(engine, messages=user(COPY), max_tokens=40, spec="off")
    fast, _ = run(engine, messages=user(COPY), max_tokens=40, spec="on", draft_max=6, drafter=drafter)
    assert fast.token_ids == plain.token_ids
    drafted, accepted = fast.stats.by_drafter[drafter]
    assert drafted > 0 and accepted >= 5


def test_the_ngram_cache_drafts_what_an_earlier_answer_said(engine: Engine) -> None:
    question = user("Write a short poem about a lighthouse.")
    engine.ngrams.clear()
    first, _ = run(engine, messages=question, max_tokens=48, spec="off")  # the session table learns it
    again, _ = run(engine, messages=question, max_tokens=48, spec="on", draft_max=6, drafter="ngram-cache")
    assert again.token_ids == first.token_ids
    drafted, accepted = again.stats.by_drafter["ngram-cache"]
    assert drafted > 0 and accepted >= 10
    engine.ngrams.clear()  # forgotten: nothing to draft from any more
    cold, _ = run(engine, messages=question, max_tokens=48, spec="on", draft_max=6, drafter="ngram-cache")
    assert cold.token_ids == first.token_ids and "ngram-cache" not in cold.stats.by_drafter


TYPOS = ("Correct the typos in this paragraph and output the full corrected paragraph:\n\nThe old lighthose stood "
         "on the rocky shore for more then a hundred years. Every nigth its keeper climbed the narow stairs, lit "
         "the great lamp, and watched the ships pass safley through the dark and stormy water.")


def test_auto_switches_drafters_within_an_answer_and_stays_lossless(engine: Engine) -> None:
    """The answer copies the prompt, with departures where typos are corrected: prompt lookup
    and the n-gram map both propose, each tracked on its own, and Auto takes drafts from both.
    It plans with a GPU's costs, so what is tested is the switching, not whether this CPU pays."""
    for kind in (DrafterKind.NGRAM, DrafterKind.NGRAM_MAP, DrafterKind.NGRAM_CACHE):
        engine.use_costs(kind, 8, dataclasses.replace(GPU_LIKE, target_batch_s=list(GPU_LIKE.target_batch_s)))
    plain, _ = run(engine, messages=user(TYPOS), max_tokens=100, spec="off")
    engine.ngrams.clear()
    auto, _ = run(engine, messages=user(TYPOS), max_tokens=100, spec="auto", draft_max=8)
    assert auto.token_ids == plain.token_ids
    drafting = {name for name, (drafted, _) in auto.stats.by_drafter.items() if drafted > 0}
    assert len(drafting) >= 2, auto.stats.by_drafter  # it switched
    assert auto.stats.accepted >= 10 and auto.stats.by_drafter[auto.stats.drafter][1] > 0
    assert sum(a for _, a in auto.stats.by_drafter.values()) == auto.stats.accepted
