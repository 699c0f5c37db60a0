"""Threads chosen by measurement: the tuner on a simulated 2-core machine (its pass times), then
on the live engine (counts really set on every context, greedy output unchanged, one OpenMP team)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import llama_cpp

from desktop_app.engine import Engine
from desktop_app.engine.api import GenerateRequest, ModelOptions, SpecMode
from desktop_app.engine.events import final_result
from desktop_app.engine.llama.threads import (
    PROBE_EVERY_MAX_S,
    ThreadReason,
    ThreadTuner,
    default_threads,
    thread_candidates,
)

# Measured here (SmolLM2, ms per token): idle 2 threads win; with one busy process 2 threads
# stall now and then (a thread waiting for its core), 1 thread keeps its pace.
IDLE = {1: 0.013, 2: 0.009}
BUSY = {1: 0.014, 2: 0.009}
STALL = 0.17  # every third pass at 2 threads with a core taken


class Machine:
    """Pass times of a 2-core machine for the tuner's count; ``busy`` processes take a core."""

    def __init__(self) -> None:
        self.busy = False
        self.passes = 0
        self.counts: list[int] = []  # the count each pass ran at

    def seconds(self, count: int) -> float:
        self.passes += 1
        self.counts.append(count)
        if self.busy and count == 2 and self.passes % 3 == 0:
            return STALL
        return (BUSY if self.busy else IDLE)[count]


def drive(tuner: ThreadTuner, machine: Machine, passes: int) -> list[int]:
    """Run ``passes`` target passes; returns the count each ran at."""
    start = len(machine.counts)
    for _ in range(passes):
        tuner.observe(1, machine.seconds(tuner.count))
    return machine.counts[start:]


def test_candidates_and_default_counts() -> None:
    assert thread_candidates(2) == (1, 2) and default_threads(2) == 2
    assert thread_candidates(16) == (1, 2, 4, 8, 14) and default_threads(16) == 14
    assert thread_candidates(1) == (1,)


def test_the_tuner_follows_load_as_it_comes_and_goes() -> None:
    applied: list[int] = []
    machine = Machine()
    tuner = ThreadTuner(lambda n, batch: applied.append(n), candidates=(1, 2))
    tuner.calibrate(lambda: machine.seconds(tuner.count))
    assert tuner.count == 2 and tuner.in_use.describe() == "2 threads"

    idle = drive(tuner, machine, 400)
    assert idle.count(1) / len(idle) < 0.1  # idle: 2 threads, the probes cost little

    machine.busy = True  # a background process takes a core
    drive(tuner, machine, 60)
    assert tuner.in_use.describe() == "1 thread: machine busy"
    busy = drive(tuner, machine, 1500)  # about 20 s of decoding
    # probes try 2 threads again now and then; a stall drops it from the trial at once
    assert busy.count(2) <= 12 and tuner.in_use.count == 1

    machine.busy = False  # the load leaves: the next probes find 2 threads faster
    # probes come within seconds (more after a probe that stalled: they keep their cost under 1 %)
    back = drive(tuner, machine, int(3 * PROBE_EVERY_MAX_S / IDLE[2]))
    assert tuner.in_use.count == 2 and tuner.reason is ThreadReason.FASTEST
    assert back[-200:].count(2) >= 190
    assert applied[-1] == 2


def test_a_trial_times_one_token_passes_and_verify_passes_keep_the_count_in_use() -> None:
    """While speculating, a trial's other counts run one-token passes only: a 9-row verify pass
    at a slower count would lose several tokens' time."""
    applied: list[tuple[int, int]] = []
    tuner = ThreadTuner(lambda n, batch: applied.append((n, batch)), candidates=(1, 2))
    tuner.calibrate(lambda: IDLE[tuner.count])
    verify_counts = set()
    for i in range(3000):  # a speculating loop: a verify pass after each one-token pass
        batch = 9 if i % 2 else 1
        count = tuner.count if batch == 1 else tuner.batch_count
        if batch > 1:
            verify_counts.add(count)
        tuner.observe(batch, IDLE[count] * (5 if batch > 1 else 1))
    assert tuner.trials >= 2 and tuner.in_use.count == 2
    assert (1, 2) in applied  # one thread was tried, for one-token passes only
    assert verify_counts == {2}


def test_without_calibration_the_first_passes_measure() -> None:
    machine = Machine()
    machine.busy = True
    tuner = ThreadTuner(lambda n, batch: None, candidates=(1, 2))
    drive(tuner, machine, 60)
    assert tuner.in_use.count == 1 and tuner.quiet_count == 1


def test_a_count_the_user_set_never_changes() -> None:
    applied: list[int] = []
    machine = Machine()
    tuner = ThreadTuner(lambda n, batch: applied.append(n), fixed=3)
    tuner.calibrate(lambda: machine.seconds(tuner.count))
    machine.busy = True
    for _ in range(500):
        tuner.observe(1, 0.5)
    assert tuner.count == 3 and applied == [] and tuner.trials == 0
    assert tuner.in_use.describe() == "3 threads: set by you"


def _n_threads(engine: Engine) -> set[int]:
    contexts = [engine.target.handle[1]] if engine.target is not None else []
    if engine.draft is not None and hasattr(engine.draft, "handle"):
        contexts.append(engine.draft.handle[1])
    return {int(llama_cpp.llama_n_threads(ctx)) for ctx in contexts}


def test_the_live_engine_measures_and_sets_its_count_and_the_text_stays_the_same(models) -> None:
    fixed = {}
    for count in (1, 2):
        engine = Engine()
        engine.load_target(models.target, ModelOptions(n_threads=count))
        engine.load_draft(models.draft, ModelOptions(n_threads=count))
        result = final_result(
            engine.generate(GenerateRequest(prompt="Once upon a time", max_tokens=40, spec=SpecMode.OFF))
        )
        assert result.stats.threads == f"{count} thread{'s' if count > 1 else ''}: set by you"
        assert _n_threads(engine) == {count}
        fixed[count] = result.token_ids
        engine.close()
    assert fixed[1] == fixed[2]

    engine = Engine()
    engine.load_target(models.target)  # no count given: measured
    engine.load_draft(models.draft)
    assert engine.threads.adaptive == (len(thread_candidates()) > 1)
    for spec in (SpecMode.OFF, SpecMode.ON, SpecMode.AUTO):
        result = final_result(engine.generate(GenerateRequest(prompt="Once upon a time", max_tokens=40, spec=spec)))
        assert result.token_ids == fixed[1]  # whatever count each pass ran at
        assert re.fullmatch(r"\d+ threads?(: (machine busy|fastest for this model))?", result.stats.threads)
        # every context computes with the count in use (the draft's too)
        assert _n_threads(engine) == {engine.threads.count}
    if engine.threads.adaptive:
        assert engine.threads.trials >= 1  # the first answer measured the candidates
        assert engine.threads.quiet_count in thread_candidates()
    assert engine.loaded().threads == engine.threads.in_use.describe()
    engine.close()


TEAM_SCRIPT = """
import os, sys
from desktop_app.engine import Engine
from desktop_app.engine.api import GenerateRequest, ModelOptions, SpecMode
from desktop_app.engine.events import final_result
engine = Engine()
engine.load_target(sys.argv[1], ModelOptions(n_threads=2))
engine.load_draft(sys.argv[2], ModelOptions(n_threads=2))
before = len(os.listdir("/proc/self/task"))
for _ in range(3):
    result = final_result(engine.generate(GenerateRequest(prompt="Once upon a time", max_tokens=24, spec=SpecMode.ON)))
    assert result.stats.drafted > 0
print(len(os.listdir("/proc/self/task")) - before)
"""


def test_the_draft_and_the_target_share_one_thread_team(models, tmp_path: Path) -> None:
    """Both contexts decode from one thread, so llama.cpp's OpenMP team is shared: 2 threads
    each add ONE worker thread in all, not one per context spinning against the other."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}  # numpy's own threads are not llama.cpp's
    out = subprocess.run(
        [sys.executable, "-c", TEAM_SCRIPT, str(models.target), str(models.draft)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip().splitlines()[-1]) == 1
