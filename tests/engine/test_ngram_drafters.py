"""The model-free drafters on the embedded model: each keeps greedy output token-identical to
plain decoding while its drafts are accepted, and Auto switches among them within an answer."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from desktop_app.engine import Engine
from desktop_app.engine.api import DRAFT_K, DrafterKind
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


TREES = "Write a short paragraph about why cities should plant more trees."
TOWNS = "Repeat that paragraph, but replace the word cities with towns everywhere."


def test_auto_switches_drafters_within_an_answer_and_stays_lossless(engine: Engine) -> None:
    """The second turn repeats the first answer with a word replaced: prompt lookup copies from
    the conversation, the n-gram map proposes the majority follower, and the n-gram cache what
    the first turn taught it; each is tracked on its own and Auto takes drafts from all of them.
    It plans with a GPU's costs, as given, so what is tested is the switching (the same on any
    machine), not whether this CPU pays."""
    for kind in (DrafterKind.NGRAM, DrafterKind.NGRAM_MAP, DrafterKind.NGRAM_CACHE):
        engine.use_costs(
            kind, DRAFT_K.high, dataclasses.replace(GPU_LIKE, target_batch_s=list(GPU_LIKE.target_batch_s))
        )
    engine.ngrams.clear()
    first, _ = run(engine, messages=user(TREES), max_tokens=100, spec="off")
    turns = [*user(TREES), {"role": "assistant", "content": first.text}, *user(TOWNS)]
    learned = engine.ngrams.snapshot()
    auto, _ = run(engine, messages=turns, max_tokens=100, spec="auto", draft_max=8)
    engine.ngrams.restore(learned)  # plain decoding sees what Auto saw
    plain, _ = run(engine, messages=turns, max_tokens=100, spec="off")
    assert auto.token_ids == plain.token_ids
    drafting = {name for name, (_, accepted) in auto.stats.by_drafter.items() if accepted > 0}
    assert len(drafting) >= 2, auto.stats.by_drafter  # it switched, and the target took drafts from each
    assert auto.stats.accepted >= 10 and auto.stats.by_drafter[auto.stats.drafter][1] > 0
    assert sum(a for _, a in auto.stats.by_drafter.values()) == auto.stats.accepted
