"""No answer waits for a measurement: Auto plans with costs measured here, kept by an earlier
process, or a prior its own passes refine; what it learns is kept for the next process, per
machine, llama.cpp build, pair and thread count. And the time to the first token counts every
wait before it.

The prior and its learning with injected passes; then real engines on the factory pair, with
the costs file in a temporary folder."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from desktop_app.engine import CostMemory, Engine
from desktop_app.engine.api import DrafterKind, GenerateRequest, SpecMode
from desktop_app.engine.auto.cost_model import CPU_ROW, REBUILD, prior_costs
from desktop_app.engine.auto.setup import AutoSetup
from desktop_app.engine.events import final_result


def test_a_prior_takes_its_unit_from_the_first_pass_and_its_shape_from_the_passes_that_measure_it() -> None:
    costs = prior_costs(8, on_cpu=True, draft_ratio=0.0)
    assert costs.thin and not costs.anchored
    costs.follow(1, 0.020)  # the first one-token pass: 20 ms
    assert costs.anchored and costs.target_batch_s[0] == pytest.approx(0.020)
    # every size in that unit, as the prior's shape says (nothing measured them yet)
    assert costs.target_batch_s[4] == pytest.approx(0.020 * (1 + REBUILD + 4 * CPU_ROW))
    # one slow pass (a stall) does not set the unit: the first passes' mean does
    costs.follow(1, 0.200)
    for _ in range(8):
        costs.follow(1, 0.020)
    assert 0.020 < costs.target_batch_s[0] < 0.020 * 1.3  # not 0.2 s
    assert costs.load == 1.0  # giving the prior its unit is not load
    # verify passes of 5 rows that cost 50 ms (with the one-token pass after each): the size's
    # cost becomes what they measured, while sizes not measured keep the prior's shape
    for _ in range(int(costs.fully_seen)):
        costs.follow(5, 0.050)
        costs.follow(1, 0.020)
    assert costs.target_batch_s[4] == pytest.approx(0.050, rel=0.05)
    assert costs.seen[4] == costs.fully_seen and costs.seen[8] == 0
    # then the size stands like a calibrated one: a single slow pass moves only the level
    before = costs.target_batch_s[4]
    costs.follow(5, 0.500)
    costs.follow(1, 0.020)
    assert costs.target_batch_s[4] < 2 * before


def test_a_calibrated_table_is_not_bent_by_single_passes() -> None:
    setup = AutoSetup(lambda count: None)
    costs = prior_costs(4, on_cpu=True, draft_ratio=0.0)
    costs.seen = [costs.fully_seen] * len(costs.seen)  # as a calibration leaves it
    costs.level_seen = None
    shape = [c / costs.target_batch_s[0] for c in costs.target_batch_s]
    for _ in range(30):
        costs.follow(3, 10.0)  # far dearer than the table says
        costs.follow(1, 1.0)
    assert [c / costs.target_batch_s[0] for c in costs.target_batch_s] == pytest.approx(shape)
    assert setup.costs == {}


def test_kept_costs_are_for_one_build_and_one_thread_count(tmp_path: Path) -> None:
    file = tmp_path / "auto-costs.json"
    kept = CostMemory(lambda: file, machine="m", build="b1").for_pair("pair")
    costs = prior_costs(8, on_cpu=True, draft_ratio=0.0)
    costs.threads = 2
    costs.follow(1, 0.010)
    kept.remember(DrafterKind.NGRAM, costs)
    again = CostMemory(lambda: file, machine="m", build="b1").for_pair("pair")
    recalled = again.recall(DrafterKind.NGRAM, 8, 2)
    assert recalled is not None and recalled.target_batch_s == costs.target_batch_s
    assert recalled.seen == costs.seen  # what is thin stays thin
    assert again.recall(DrafterKind.NGRAM, 4, 2) is not None  # a shorter table is cut from it
    assert again.recall(DrafterKind.NGRAM, 16, 2) is None  # a longer one was never measured
    assert again.recall(DrafterKind.NGRAM, 8, 1) is None  # another thread count
    assert again.recall(DrafterKind.MODEL, 8, 2) is None  # a drafter whose cost was never kept
    rebuilt = CostMemory(lambda: file, machine="m", build="b2").for_pair("pair")
    assert rebuilt.recall(DrafterKind.NGRAM, 8, 2) is None  # another llama.cpp build


def test_a_damaged_costs_file_is_said_once_and_ignored(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    file = tmp_path / "auto-costs.json"
    file.write_text(json.dumps({"version": 1, "costs": {"k": {"batch_s": ["x"], "seen": [0], "draft_s": {}}}}))
    kept = CostMemory(lambda: file, machine="m", build="b").for_pair("pair")
    assert kept.recall(None, 1, 1) is None
    assert kept.recall(None, 1, 2) is None
    assert len(caplog.records) == 1 and "ignoring the remembered Auto's costs" in caplog.records[0].getMessage()


def answer(engine: Engine, spec: str = "auto") -> object:
    request = GenerateRequest(
        messages=[{"role": "user", "content": "Say the alphabet: a b c d e f g"}],
        max_tokens=24,
        spec=SpecMode(spec),
        drafter=DrafterKind.MODEL,
        draft_max=3,
    )
    return final_result(engine.generate(request))


def never_measure(*args: object, **kwargs: object) -> object:
    raise AssertionError("an answer waited for a measurement")


def test_a_fresh_engines_first_auto_answer_measures_nothing_and_keeps_what_it_learned(
    models, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "auto-costs.json"
    engine = Engine(cost_memory=CostMemory(lambda: file))
    try:
        engine.load_target(models.target)
        engine.load_draft(models.draft)
        monkeypatch.setattr("desktop_app.engine.auto.setup.time_decodes", never_measure)
        monkeypatch.setattr("desktop_app.engine.auto.setup.tune_threads", never_measure)
        plain = answer(engine, "off")
        auto = answer(engine, "auto")
        assert auto.text == plain.text  # exact, whatever the costs
        costs = engine.auto.costs[(DrafterKind.MODEL, 3)]
        assert costs.anchored and costs.target_batch_s[0] < 1.0  # in seconds now, from its own passes
    finally:
        engine.close()
    kept = json.loads(file.read_text())["costs"]
    assert len(kept) == 1
    (entry,) = kept.values()
    assert entry["batch_s"][0] == pytest.approx(costs.target_batch_s[0])
    assert entry["draft_s"]["model"] > 0


def test_costs_measured_once_are_where_the_next_process_starts(models, tmp_path: Path, monkeypatch) -> None:
    file = tmp_path / "auto-costs.json"
    first = Engine(cost_memory=CostMemory(lambda: file))
    try:
        first.load_target(models.target)
        first.load_draft(models.draft)
        measured = first.prepare_auto(DrafterKind.MODEL, 3)  # a host measures while idle
        assert measured is not None and not measured.thin
    finally:
        first.close()
    second = Engine(cost_memory=CostMemory(lambda: file))
    try:
        second.load_target(models.target)
        second.load_draft(models.draft)
        second.threads.recall()
        second.models.threads.count = measured.threads  # the thread count the first one measured at
        second.models.threads.batch_count = measured.threads
        second.models.threads.quiet_count = measured.threads
        monkeypatch.setattr("desktop_app.engine.auto.setup.time_decodes", never_measure)
        recalled = second.prepare_auto(DrafterKind.MODEL, 3)  # known: nothing to measure while idle
        assert recalled is not None and recalled.target_batch_s == measured.target_batch_s
        assert recalled.draft_token_s == measured.draft_token_s
        answer(second)  # and the answer plans with them, measuring nothing
        assert second.auto.costs[(DrafterKind.MODEL, 3)] is recalled and not recalled.thin
    finally:
        second.close()


def test_the_time_to_the_first_token_counts_a_wait_for_the_engine(models) -> None:
    engine = Engine()
    try:
        engine.load_target(models.target)
        hold = 0.4
        taken = threading.Event()

        def busy() -> None:
            with engine._lock:  # another job, or an idle measurement giving way
                taken.set()
                time.sleep(hold)

        thread = threading.Thread(target=busy)
        thread.start()
        taken.wait()
        result = answer(engine, "off")
        thread.join()
        assert result.stats.ttft_s >= hold * 0.9
    finally:
        engine.close()
