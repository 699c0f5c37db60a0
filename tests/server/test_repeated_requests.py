"""A request sent again (an agent retrying, a regenerate) is copied from the first token of its
answer: `specchat serve`'s n-gram cache learned the first answer, and Auto drafts the copy in
runs longer than a model drafter's k, through the real server and the official client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from desktop_app.engine import Engine
from desktop_app.engine.api import DRAFT_FREE, DRAFT_K
from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.server.backend import EngineBackend
from tests.server.live_server import Server

CODE_EDIT = (
    "Rename the variable items to orders and output the whole function:\n"
    "def total_price(items, tax_rate):\n"
    "    subtotal = sum(item.price * item.quantity for item in items)\n"
    "    return round(subtotal * (1 + tax_rate), 2)\n"
)


@pytest.fixture()
def served(models: Any) -> Iterator[tuple[Engine, openai.OpenAI]]:
    """A fresh `specchat serve` process's engine (nothing learned yet) behind a real server.
    Costs of a memory-bound GPU (a pass of 65 rows costs about one row's), so Auto drafts as
    far as the evidence of a copy carries it; on the factory model's CPU costs it drafts nothing."""
    engine = Engine()
    engine.load_target(models.target)
    gpu = CostModel([0.010 + 0.0002 * b for b in range(DRAFT_K.high + 1)], 2e-5)
    for kind in DRAFT_FREE:
        engine.use_costs(kind, DRAFT_K.high, gpu)
    backend = EngineBackend(engine)
    server = Server(backend)
    try:
        yield engine, openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)
    finally:
        server.stop()
        backend.close()
        engine.close()


def _ask(client: openai.OpenAI, speculation: str) -> tuple[str, dict[str, Any]]:
    reply = client.chat.completions.create(
        model="any",
        messages=[{"role": "user", "content": CODE_EDIT}],
        max_tokens=120,
        temperature=0,
        extra_body={"speculation": speculation},
    )
    return reply.choices[0].message.content or "", reply.model_extra["timings"]  # type: ignore[index]


def test_a_request_sent_again_is_drafted_in_long_runs_and_takes_few_passes(
    served: tuple[Engine, openai.OpenAI],
) -> None:
    engine, client = served
    first, first_timings = _ask(client, "auto")
    again, timings = _ask(client, "auto")
    plain, plain_timings = _ask(client, "off")
    assert first == again == plain  # greedy: the same text with and without drafts
    tokens = timings["predicted_n"]
    assert tokens == plain_timings["predicted_n"] > 60
    passes = timings["speculation"]["target_passes"]
    assert plain_timings["speculation"]["target_passes"] == tokens  # off: one pass a token
    assert passes * 4 <= first_timings["speculation"]["target_passes"]  # far fewer than the first time
    assert tokens / passes > DRAFT_K.default + 1  # passes of more tokens than a k = 8 draft gives
    # 120 tokens in 3 passes: copied from the answer's first token on, in runs of up to 64 (the
    # n-gram counts alone, which pick the copy up a few tokens in and rate it by its run so far,
    # take 5)
    assert passes <= 3
    assert timings["draft_n_accepted"] >= tokens - passes


def test_the_cache_learns_each_answer_within_its_bound(served: tuple[Engine, openai.OpenAI]) -> None:
    engine, client = served
    recent = engine.ngrams.recent
    assert len(recent) == 0
    _ask(client, "off")
    learned = len(recent)
    assert learned > 60  # the prompt and the answer, at once
    for _ in range(3):
        _ask(client, "off")
    assert len(recent) <= recent.max_tokens and recent.windows <= len(recent)
