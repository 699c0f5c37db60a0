"""Advice by speed (issue 49): tokens/s predicted as effective bandwidth over the bytes a token
reads, the bandwidth learned from the models this machine ran (docs/speed-advice.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.engine.model_speeds import MIN_TOKENS, MeasuredSpeed, ModelSpeeds, plain_speed
from desktop_app.engine.stats import GenerationStats
from desktop_app.library.catalog import CatalogPair, load_catalog
from desktop_app.library.fit import MachineMemory, best_pair
from desktop_app.library.speed import (
    DECODE_SHARE,
    DEFAULT_BANDWIDTH_GB_S,
    FAST_ENOUGH_TOKENS_S,
    READ_BYTES,
    READ_PASSES,
    TEACHING_BYTES,
    SpeedGuess,
    before_any_run,
    learned,
    machine_speed,
    read_bandwidth_gb_s,
    speed_text,
)

GB = 10**9
PAIRS = load_catalog()
TWO_CORES = MachineMemory(23 * GB)  # this project's CPU-only test machine


def _pair(pair_id: str) -> CatalogPair:
    return next(p for p in PAIRS if p.id == pair_id)


def test_the_prediction_is_bandwidth_over_the_bytes_a_token_reads() -> None:
    guess = SpeedGuess(4.0)
    assert guess.tokens_per_s(2 * GB) == pytest.approx(2.0)
    dense = _pair("gemma-3-27b-it")
    assert guess.of_pair(dense) == pytest.approx(4.0 / dense.target.size_gb)  # a dense target: its whole file
    moe = _pair("qwen3.5-35b-a3b")  # 35B parameters, 3B of them per token
    assert moe.target.bytes_per_token == pytest.approx(moe.target.size_bytes * 3 / 35, rel=1e-6)
    assert guess.of_pair(moe) == pytest.approx(4.0 / (moe.target.size_gb * 3 / 35))
    assert speed_text(5.96) == "about 6 tokens/s here" and speed_text(0.24) == "about 0.2 tokens/s here"
    assert speed_text(1.04) == "about 1.0 tokens/s here"
    assert speed_text(4.6) == "about 4.6 tokens/s here"  # slow: never "about 5" beside a fast-enough 5
    assert speed_text(5.04) == "about 5 tokens/s here"


def test_a_two_core_machine_is_advised_a_fast_enough_model_not_the_biggest_that_fits() -> None:
    by_memory = best_pair(PAIRS, TWO_CORES)
    assert by_memory is not None and by_memory.target.size_gb > 10  # memory alone: a 27B-class model
    default = SpeedGuess()
    pair = best_pair(PAIRS, TWO_CORES, default)
    assert pair is not None and "chat" in pair.uses
    assert default.of_pair(pair) >= FAST_ENOUGH_TOKENS_S
    # the biggest of those fast enough: every bigger chat pair that fits is predicted slower
    bigger = [p for p in PAIRS if "chat" in p.uses and pair.ram_gb < p.ram_gb <= 23 * 0.8]
    assert bigger and all(default.of_pair(p) < FAST_ENOUGH_TOKENS_S for p in bigger)


def test_when_nothing_is_fast_enough_the_fastest_that_fits_is_advised() -> None:
    slow = SpeedGuess(0.5)
    pair = best_pair(PAIRS, TWO_CORES, slow)
    fitting = [p for p in PAIRS if "chat" in p.uses and p.ram_gb <= 23 * 0.8]
    assert pair is not None and slow.of_pair(pair) == max(slow.of_pair(p) for p in fitting)
    assert best_pair(PAIRS, MachineMemory(1 * GB), slow) is None  # nothing fits: nothing to advise


def test_a_fast_machine_gets_the_biggest_pair_its_memory_allows() -> None:
    assert best_pair(PAIRS, TWO_CORES, SpeedGuess(500.0)) == best_pair(PAIRS, TWO_CORES)


def test_the_figure_is_learned_from_the_largest_model_run_here_on_the_same_kind_of_device() -> None:
    runs = [
        MeasuredSpeed("tiny.gguf", 100_000_000, 40.0, on_gpu=False),  # overheads weigh: it teaches nothing
        MeasuredSpeed("small.gguf", 800_000_000, 5.0, on_gpu=False),  # 4 GB/s
        MeasuredSpeed("bigger.gguf", 2_000_000_000, 3.0, on_gpu=False),  # 6 GB/s
        MeasuredSpeed("gpu.gguf", 4_000_000_000, 50.0, on_gpu=True),
    ]
    before = SpeedGuess(9.0, read=True)
    cpu = learned(runs, before)
    assert cpu.bandwidth_gb_s == pytest.approx(6.0) and cpu.measured == "bigger.gguf"
    assert "bigger.gguf" in cpu.basis()
    assert learned(runs, before, on_gpu=True).bandwidth_gb_s == pytest.approx(200.0)
    assert learned(runs[:1], before) is before and learned([], before) is before
    assert runs[0].file_bytes < TEACHING_BYTES <= runs[1].file_bytes
    assert "read speed" in before.basis() and "default" in SpeedGuess().basis()


def test_before_any_run_the_machine_s_memory_read_speed_is_measured() -> None:
    read = read_bandwidth_gb_s()
    assert read is not None and 0.5 < read < 2000  # GB/s: from a slow laptop to a big server
    guess = before_any_run()
    assert guess.read and guess.bandwidth_gb_s == pytest.approx(read * DECODE_SHARE)
    assert DEFAULT_BANDWIDTH_GB_S == SpeedGuess().bandwidth_gb_s


def _answer(tokens: int, seconds: float, drafted: int = 0, plain: tuple[int, float] = (0, 0.0)) -> GenerationStats:
    return GenerationStats(
        generated_tokens=tokens, decode_s=seconds, drafted=drafted, plain_passes=plain[0], plain_s=plain[1]
    )


def test_an_answer_gives_its_plain_decoding_speed() -> None:
    assert plain_speed(_answer(64, 2.0)) == pytest.approx(32.0)
    assert plain_speed(_answer(MIN_TOKENS - 1, 0.5)) is None  # too short to say
    # speculation's gain is not the memory's: its one-token passes say what plain decoding costs
    assert plain_speed(_answer(64, 1.0, drafted=40, plain=(10, 0.5))) == pytest.approx(20.0)
    assert plain_speed(_answer(64, 1.0, drafted=40, plain=(2, 0.1))) is None


def test_the_best_speed_of_each_model_is_kept_per_machine(tmp_path: Path) -> None:
    file = tmp_path / "model-speeds.json"
    speeds = ModelSpeeds(lambda: file, machine="here")
    model = tmp_path / "m.gguf"
    assert speeds.remember(model, 600_000_000, False, _answer(64, 4.0)) == pytest.approx(16.0)
    speeds.remember(model, 600_000_000, False, _answer(64, 8.0))  # a slower answer (a busy moment)
    speeds.remember(model, 600_000_000, False, _answer(4, 0.01))  # too short: not a figure
    again = ModelSpeeds(lambda: file, machine="here")  # the next process
    assert again.measured() == [MeasuredSpeed("m.gguf", 600_000_000, 16.0, False)]
    assert machine_speed(speeds=again) == SpeedGuess(9.6, "m.gguf")
    assert ModelSpeeds(lambda: file, machine="elsewhere").measured() == []


def test_a_damaged_file_of_speeds_means_the_default(tmp_path: Path) -> None:
    file = tmp_path / "model-speeds.json"
    file.write_text("{not json")
    assert machine_speed(speeds=ModelSpeeds(lambda: file, machine="here")) == before_any_run()


def test_the_page_quotes_the_constants_the_code_uses() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "speed-advice.md").read_text(encoding="utf-8")
    assert f"`FAST_ENOUGH_TOKENS_S = {FAST_ENOUGH_TOKENS_S}`" in page
    assert f"`TEACHING_BYTES = {TEACHING_BYTES // 10**6} MB`" in page and f"({TEACHING_BYTES // 10**6} MB)" in page
    assert f"`DECODE_SHARE = {DECODE_SHARE}`" in page and f"({DECODE_SHARE:.0%})" in page
    assert f"`DEFAULT_BANDWIDTH_GB_S = {DEFAULT_BANDWIDTH_GB_S}`" in page
    assert f"sums a {READ_BYTES // 2**20} MiB buffer" in page and READ_PASSES == 3 and "three times" in page
