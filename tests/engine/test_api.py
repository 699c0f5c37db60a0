"""The engine's declarations (desktop_app/engine/api.py) and the behaviour that reads them."""

from __future__ import annotations

import json
import math
import pickle

import pytest

from desktop_app.engine import Engine
from desktop_app.engine.api import (
    DRAFT_K,
    DRAFTER_PREFERENCE,
    NO_DRAFTER,
    TEMPERATURE,
    TOP_P,
    DrafterKind,
    FinishReason,
    GenerateRequest,
    SamplingParams,
    SpecMode,
    choose_drafter,
)
from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.engine.stats import GenerationStats
from tests.helpers import run, user


def test_stats_words_read_and_written_as_before() -> None:
    """Plain words (a record saved before the enums, JSON) become members; the CLI's --json, the API's
    timings and the history get the same words back, and the engine's pipe carries the members."""
    stats = GenerationStats(mode="auto", drafter="none", finish_reason="context_full")  # type: ignore[arg-type]
    assert stats.mode is SpecMode.AUTO and stats.drafter is NO_DRAFTER
    assert stats.finish_reason is FinishReason.CONTEXT_FULL
    data = json.loads(json.dumps(stats.to_dict()))
    assert (data["mode"], data["drafter"], data["finish_reason"]) == ("auto", "none", "context_full")
    assert all(type(stats.to_dict()[key]) is str for key in ("mode", "drafter", "finish_reason"))
    assert pickle.loads(pickle.dumps(stats)) == stats
    assert f"mode {stats.mode}, drafter {stats.drafter}" == "mode auto, drafter none"  # the CLI's line
    assert GenerationStats(drafter=DrafterKind.NGRAM_MAP).to_dict()["drafter"] == "ngram-map"
    with pytest.raises(ValueError):
        GenerationStats(finish_reason="done")  # type: ignore[arg-type]


def test_choose_drafter_honours_the_request_and_falls_back_in_preference_order() -> None:
    everything = set(DrafterKind)
    assert choose_drafter(None, everything) is DRAFTER_PREFERENCE[0] is DrafterKind.MTP
    assert choose_drafter("model", everything) is DrafterKind.MODEL
    assert choose_drafter(DrafterKind.MTP, {DrafterKind.MODEL, DrafterKind.NGRAM}) is DrafterKind.MODEL
    assert choose_drafter(DrafterKind.MODEL, {DrafterKind.NGRAM}) is DrafterKind.NGRAM
    assert choose_drafter(None, ()) is DrafterKind.NGRAM  # prompt lookup needs nothing
    with pytest.raises(ValueError):
        choose_drafter("telepathy", everything)


@pytest.mark.parametrize("value", [math.nan, math.inf, -1.0, 5.5, "0.5", True])
def test_bad_temperatures_get_one_message_naming_the_range(value: object) -> None:
    with pytest.raises(ValueError, match=r"temperature must be .*0\.0 and 5\.0"):
        SamplingParams(temperature=value)  # type: ignore[arg-type]
    assert not TEMPERATURE.accepts(value)


def test_ranges_check_their_bounds() -> None:
    assert DRAFT_K.check(DRAFT_K.low) == 1 and DRAFT_K.check(64) == 64
    for bad in (0, 65, 2.5):
        with pytest.raises(ValueError, match="draft_max"):
            GenerateRequest(prompt="x", draft_max=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="top_p must be above 0.0"):
        SamplingParams(top_p=0.0)
    assert TOP_P.check(1.0) == 1.0
    with pytest.raises(ValueError, match="spec must be one of off, on, auto"):
        GenerateRequest(prompt="x", spec="sometimes")  # type: ignore[arg-type]
    assert GenerateRequest(prompt="x", spec="on").spec is SpecMode.ON  # type: ignore[arg-type]


def test_the_users_maximum_bounds_fixed_k_while_auto_copies_run_long(default_engine: Engine) -> None:
    # Costs of a memory-bound GPU (verifying 65 rows costs about one), so auto wants to draft and
    # the caps are what stop it; measured CPU costs would make drafting a coin toss on a busy machine.
    gpu = CostModel([0.010 + 0.0002 * b for b in range(DRAFT_K.high + 1)], 2e-5)
    default_engine.use_costs(DrafterKind.NGRAM, DRAFT_K.high, gpu)
    rewrite = (
        "Repeat this passage exactly: The quick brown fox jumps over the lazy dog near the river bank, "
        "then it runs up the green hill, past the old mill and the quiet farm, and sleeps under the oak tree."
    )
    fixed, _ = run(default_engine, messages=user(rewrite), max_tokens=60, spec="on", draft_max=2, drafter="ngram")
    assert fixed.stats.draft_max == 2 and fixed.stats.drafted > 0
    assert max(n for n, _ in fixed.stats.cycles) <= 2
    auto, _ = run(default_engine, messages=user(rewrite), max_tokens=60, spec="auto", draft_max=2, drafter="ngram")
    assert auto.stats.draft_max == DRAFT_K.high  # a copy is drafted in runs longer than the user's k
    assert max(n for n, _ in auto.stats.cycles) > 2
    assert auto.text == fixed.text


def test_the_calibration_after_a_load_is_what_the_next_answer_uses(models: object) -> None:
    engine = Engine()
    try:
        engine.load_target(models.target)  # type: ignore[attr-defined]
        engine.load_draft(models.draft)  # type: ignore[attr-defined]
        costs = engine.prepare_auto(DrafterKind.MODEL, 3)
        assert costs is not None and costs.k_max == 3 and costs.draft_token_s > 1e-4  # a model's decode
        calibrate = engine.calibrate
        measured: list[object] = []
        engine.calibrate = lambda *a, **k: measured.append(a) or calibrate(*a, **k)  # type: ignore[method-assign]
        run(engine, messages=user("Hello"), max_tokens=8, spec="auto", draft_max=3, drafter="model")
        assert measured == [] and engine.auto.costs == {(DrafterKind.MODEL, 3): costs}  # no second calibration
        assert engine.auto.costs[(DrafterKind.MODEL, 3)] is costs
    finally:
        engine.close()


def test_a_finished_generation_frees_the_engine_even_while_its_caller_holds_it(models) -> None:
    """The generator of an answer holds the engine's lock while it runs; once final_result has
    its Finished event the next answer must start at once, even if the caller kept the generator."""
    import threading

    from desktop_app.engine.api import ModelOptions
    from desktop_app.engine.events import final_result

    engine = Engine()
    engine.load_target(models.target, ModelOptions(n_threads=1))
    first = engine.generate(GenerateRequest(prompt="Once upon a time", max_tokens=8, spec=SpecMode.OFF))
    assert final_result(first).stats.generated_tokens == 8
    second: list[int] = []
    worker = threading.Thread(
        target=lambda: second.append(
            final_result(
                engine.generate(GenerateRequest(prompt="Once upon a time", max_tokens=8, spec=SpecMode.OFF))
            ).stats.generated_tokens
        )
    )
    worker.start()
    worker.join(timeout=60)
    assert second == [8], "the second answer waited for the first generator to be collected"
    del first
    engine.close()
