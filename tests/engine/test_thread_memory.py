"""Thread counts remembered across processes: a fresh process at a load seen before starts at the
count measured then, with no trial; another load measures; a damaged file is ignored.

The tuner on the simulated 2-core machine of test_threads, then real engines in real
subprocesses on the factory model, with the load each process sees given to it (the machine's
own load moves under a test)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from pathlib import Path

import pytest

from desktop_app import paths
from desktop_app.engine import Engine, ThreadMemory
from desktop_app.engine.api import GenerateRequest, ModelOptions, SpecMode
from desktop_app.engine.events import final_result
from desktop_app.engine.kept_figures import MAX_FILE_BYTES
from desktop_app.engine.llama.thread_memory import busy_cores
from desktop_app.engine.llama.threads import PROBE_EVERY_MAX_S, ThreadReason, ThreadTuner, thread_candidates
from tests.engine.test_threads import IDLE, Machine, drive

MODEL = "a-model"


def memory_at(path: Path, busy: int) -> ThreadMemory:
    """What a fresh process sees: the file as it is on disk, at this load."""
    return ThreadMemory(lambda: path, busy=lambda: busy, machine="this-machine")


def tuner_with(memory: ThreadMemory) -> ThreadTuner:
    return ThreadTuner(lambda n, batch: None, candidates=(1, 2), memory=memory.for_model(MODEL))


def test_a_count_measured_under_load_is_where_the_next_process_starts(tmp_path: Path) -> None:
    file = tmp_path / "thread-counts.json"
    machine = Machine()
    machine.busy = True
    first = tuner_with(memory_at(file, busy=1))
    first.recall()  # nothing remembered yet: the cores the busy process leaves, and the first passes measure
    assert first.in_use.describe() == "1 thread: machine busy"
    drive(first, machine, 60)
    assert first.count == 1 and first.trials >= 1

    second = tuner_with(memory_at(file, busy=1))
    second.recall()
    assert second.count == 1 and second.remembered
    counts = drive(second, machine, 64)  # a short answer: every pass at the remembered count
    assert set(counts) == {1} and second.trials == 0

    elsewhere = tuner_with(memory_at(file, busy=0))  # another load: not the same figure
    elsewhere.recall()
    assert elsewhere.count == 2 and not elsewhere.remembered
    machine.busy = False
    drive(elsewhere, machine, 60)
    assert elsewhere.trials >= 1
    kept = json.loads(file.read_text())["counts"]
    assert {k.rsplit("/", 1)[1]: v["threads"] for k, v in kept.items()} == {"busy 1": 1, "busy 0": 2}


def test_a_remembered_count_that_proves_wrong_is_measured_again_and_replaced(tmp_path: Path) -> None:
    file = tmp_path / "thread-counts.json"
    memory_at(file, busy=1).remember(MODEL, 1, 1, ThreadReason.BUSY)
    tuner = tuner_with(memory_at(file, busy=1))
    tuner.recall()
    assert tuner.in_use.describe() == "1 thread: machine busy"
    machine = Machine()  # but the machine is idle now (the busy process sleeps, say)
    drive(tuner, machine, int(1.5 * PROBE_EVERY_MAX_S / IDLE[1]))  # a long answer: the probes come
    assert tuner.count == 2 and not tuner.remembered
    kept = memory_at(file, busy=1).recall(MODEL, 1)
    assert kept is not None and kept.count == 2


def test_a_count_the_user_set_is_neither_recalled_nor_kept(tmp_path: Path) -> None:
    file = tmp_path / "thread-counts.json"
    memory_at(file, busy=0).remember(MODEL, 0, 1, ThreadReason.FEWER_FASTER)
    tuner = ThreadTuner(lambda n, batch: None, fixed=2, memory=memory_at(file, busy=0).for_model(MODEL))
    tuner.recall()
    tuner.calibrate(lambda: 0.01)
    assert tuner.count == 2 and tuner.in_use.describe() == "2 threads: set by you"
    assert len(json.loads(file.read_text())["counts"]) == 1


DAMAGED = {
    "not JSON": b"{ threads: 2",
    "binary": bytes(range(256)),
    "another version": json.dumps({"version": 99, "counts": {}}).encode(),
    "a list": b"[1, 2]",
    "a count that is text": json.dumps(
        {"version": 1, "counts": {"k": {"threads": "2", "reason": "FASTEST", "at": 1.0}}}
    ).encode(),
    "no threads at all": json.dumps({"version": 1, "counts": {"k": {"threads": 0, "reason": "X", "at": 1}}}).encode(),
    "too large": b" " * (MAX_FILE_BYTES + 1),
}


@pytest.mark.parametrize("content", DAMAGED.values(), ids=DAMAGED.keys())
def test_a_damaged_file_is_ignored_in_one_line_and_replaced_by_the_next_measurement(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, content: bytes
) -> None:
    file = tmp_path / "thread-counts.json"
    file.write_bytes(content)
    tuner = tuner_with(memory_at(file, busy=1))
    with caplog.at_level(logging.WARNING):
        tuner.recall()
        machine = Machine()
        machine.busy = True
        drive(tuner, machine, 60)  # it measures, as without a memory
    assert tuner.count == 1 and tuner.trials >= 1
    assert len(caplog.records) == 1
    assert caplog.records[0].getMessage().startswith(f"specchat: ignoring the remembered thread counts in {file}: ")
    kept = memory_at(file, busy=1).recall(MODEL, 1)
    assert kept is not None and kept.count == 1


def test_a_data_folder_that_cannot_be_written_costs_one_line_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, models
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(paths.HOME_ENV, str(blocker / "home"))  # a home under a file: no data folder
    engine = Engine(ThreadMemory(paths.thread_counts_file))
    engine.load_target(models.target)
    with caplog.at_level(logging.WARNING):
        for _ in range(2):
            result = final_result(engine.generate(GenerateRequest(prompt="Once upon a time", max_tokens=40)))
            assert len(result.token_ids) == 40
    assert [r.getMessage().split(":")[1] for r in caplog.records] == [
        " thread counts are measured again in each process"
    ]
    engine.close()


# A fresh process: the real engine on the factory target, at the load given on its command line;
# it prints the counts its contexts were set to after loading, and the tuner's state.
PROCESS = """
import json, sys
from pathlib import Path
from desktop_app.engine import Engine, ThreadMemory
from desktop_app.engine.api import GenerateRequest, SpecMode
from desktop_app.engine.events import final_result
target, file, busy, spec = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), SpecMode(sys.argv[4])
engine = Engine(ThreadMemory(lambda: file, busy=lambda: busy))
engine.load_target(target)
counts = []
set_threads = engine.models.set_threads
engine.models.set_threads = lambda n, b: (counts.append(n), set_threads(n, b))
result = final_result(engine.generate(GenerateRequest(prompt="Once upon a time", max_tokens=40, spec=spec)))
print(json.dumps({"counts": counts, "count": engine.threads.count, "trials": engine.threads.trials,
                  "remembered": engine.threads.remembered, "threads": result.stats.threads}))
"""


def fresh_process(target: Path, file: Path, busy: int, spec: SpecMode) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROCESS, str(target), str(file), str(busy), spec.value],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("spec", [SpecMode.OFF, SpecMode.AUTO], ids=["off", "auto"])
def test_a_fresh_process_at_a_load_seen_before_starts_at_its_count_without_a_trial(
    models, tmp_path: Path, spec: SpecMode
) -> None:
    assert len(thread_candidates()) > 1  # a machine with a choice to remember (the bench's has 2 cores)
    file = tmp_path / "thread-counts.json"
    first = fresh_process(models.target, file, busy=1, spec=spec)
    assert len(set(first["counts"])) > 1  # nothing remembered: it tried each count
    measured = first["count"]

    again = fresh_process(models.target, file, busy=1, spec=spec)
    # every context computed at the remembered count from the first pass on (Auto's calibration too)
    assert set(again["counts"]) <= {measured} and again["count"] == measured
    assert again["remembered"] and again["trials"] == 0
    assert again["threads"].startswith(f"{measured} thread")

    other_load = fresh_process(models.target, file, busy=0, spec=spec)
    assert len(set(other_load["counts"])) > 1 and not other_load["remembered"]
    busy_levels = {key.rsplit("/", 1)[1] for key in json.loads(file.read_text())["counts"]}
    assert busy_levels == {"busy 0", "busy 1"}


def test_specchat_generate_keeps_its_count_in_the_data_folder(models, tmp_path: Path) -> None:
    home = tmp_path / "home"
    cli = [sys.executable, "-m", "desktop_app", "generate", "--target", str(models.target), "--prompt", "Once"]
    env = {"SPECCHAT_HOME": str(home), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([*cli, "--max-tokens", "40", "--spec", "off", "--json"], capture_output=True, env=env)
    assert out.returncode == 0, out.stderr
    threads = json.loads(out.stdout)["stats"]["threads"]
    kept = json.loads((home / "data" / "thread-counts.json").read_text())["counts"]
    assert [entry["threads"] for entry in kept.values()] == [int(threads.split(" ")[0])]  # "1 thread: ..."
    fixed = subprocess.run([*cli, "--max-tokens", "40", "--threads", "1", "--json"], capture_output=True, env=env)
    assert fixed.returncode == 0 and json.loads(fixed.stdout)["stats"]["threads"] == "1 thread: set by you"
    assert json.loads((home / "data" / "thread-counts.json").read_text())["counts"] == kept


def test_the_load_is_what_other_processes_want_of_the_cores() -> None:
    spinners = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(2)]
    try:
        time.sleep(0.3)
        assert busy_cores(cores=64) >= 2  # both want a core, however many of them they get
        assert busy_cores(cores=1) == 1  # never more than the machine has
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def test_engines_without_a_memory_measure_in_each_process(models) -> None:
    engine = Engine()
    engine.load_target(models.target, ModelOptions())
    engine.threads.recall()
    assert not engine.threads.remembered and engine.threads.quiet_count is None
    engine.close()
