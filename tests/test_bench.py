"""``specchat bench`` end to end on the factory pair (tiny prompt set), and the lab's benches
(``python -m lab <bench>``, run from the source checkout)."""

from __future__ import annotations

import json
import re
import statistics
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_app.bench.runner import load_prompts

ROOT = Path(__file__).resolve().parents[1]  # where the lab package sits, not installed with the app


def test_bench_writes_report_and_chart(models, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts.json"
    prompts.write_text(json.dumps({"chat": ["Hello there"], "code": ["Write a loop"]}))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "desktop_app",
            "bench",
            "--target",
            str(models.target),
            "--draft",
            str(models.draft),
            "--prompts",
            str(prompts),
            "--max-tokens",
            "16",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "out" / "bench.json").read_text())
    assert set(report["summary"]) == {"chat", "code"}
    for category, entry in report["summary"].items():
        assert entry["identical_at_t0"] is True
        off = [r["tokens_per_s"] for r in report["runs"] if r["category"] == category and r["mode"] == "off"]
        assert min(off) > 0 and entry["off"]["median_tokens_per_s"] == pytest.approx(statistics.median(off), abs=0.006)
        assert f"| {category} | {entry['off']['median_tokens_per_s']:.1f} |" in out.stdout  # the table shows it
        assert entry["model:k4"]["acceptance"] > 0  # the factory draft agrees with its target
        assert "vs_best_fixed" in entry["auto"] and entry["auto"]["accepted_by_drafter"]
    drafters = ("model", "ngram", "ngram-map", "ngram-cache")  # the default: every drafter, Auto among them
    assert {r["mode"] for r in report["runs"]} == {"off", "auto", *(f"{d}:k{k}" for d in drafters for k in (2, 4, 8))}
    calibrated, learned = report["auto_pass_ms"]["calibrated"], report["auto_pass_ms"]["after the run"]
    assert len(calibrated) == len(learned) == 9 and all(ms > 0 for ms in calibrated + learned)  # 1..k_max + 1 rows
    assert "Auto's target pass of 1, 2, ... rows, ms (calibrated):" in out.stdout
    png = (tmp_path / "out" / "bench.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (900, 480)
    assert "| chat |" in out.stdout


def test_a_multi_turn_category_runs_from_a_fresh_and_from_a_warm_cache(models, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts.json"
    conversation = ["Write a list of fruits.", "Repeat that list and add two more fruits."]
    prompts.write_text(json.dumps({"chat": ["Hello there"], "multi-turn": [conversation]}))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "desktop_app",
            "bench",
            "--target",
            str(models.target),
            "--prompts",
            str(prompts),
            "--max-tokens",
            "12",
            "--draft-max",
            "4",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "out" / "bench.json").read_text())["summary"]
    assert list(summary) == ["multi-turn (fresh cache)", "chat", "multi-turn (warm cache)"]
    assert all(entry["identical_at_t0"] for entry in summary.values())
    assert "| multi-turn (warm cache) |" in out.stdout


def test_bad_prompt_files_are_explained(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not found"):
        load_prompts(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"chat": "not a list"}))
    with pytest.raises(ValueError, match="must map category names"):
        load_prompts(bad)


def test_shipped_prompt_set_covers_the_categories() -> None:
    prompts = load_prompts(None)
    assert {"chat", "code", "math", "rewrite", "translation", "multi-turn"} <= set(prompts)
    assert all(isinstance(c, list) and len(c) >= 2 for c in prompts["multi-turn"])
    assert any(any("\uac00" <= ch <= "\ud7a3" for ch in p) for p in prompts["translation"])  # Korean


def _lab(*args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lab", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


def _bench(name: str, *args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    # a busy test machine must not hold each round for a minute: the idle wait is for real figures
    out = _lab(name, "--quiet-wait", "2", *args, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return out


def test_load_bench_compares_adaptive_threads_with_each_fixed_count(models, tmp_path: Path) -> None:
    out = _bench(
        "load", "--target", str(models.target), "--max-tokens", "8", "--draft-max", "4", "--out", str(tmp_path)
    )
    report = json.loads((tmp_path / "load.json").read_text())
    assert report["configs"][0] == "adaptive" and "1 thread" in report["configs"]
    cells = {(c["busy"], c["mode"]) for c in report["cells"]}
    assert cells == {(busy, mode) for busy in (0, 1, 2) for mode in ("off", "auto")}
    for cell in report["cells"]:
        fixed = [speed for name, speed in cell["tok_s"].items() if name != "adaptive"]
        assert min(cell["tok_s"].values()) > 0 and cell["tok_s"][cell["best_fixed"]] == max(fixed)
        assert cell["adaptive_vs_best"] > 0 and len(cell["adaptive_chose"]) == report["rounds"]
    assert report["greedy_outputs_identical"] is True
    assert "| 2 | auto |" in out.stdout


def test_unused_draft_bench_reports_pass_cost_and_auto_vs_off(models, tmp_path: Path) -> None:
    out = _bench(
        "unused-draft",
        "--target",
        str(models.target),
        "--draft",
        str(models.draft),
        "--max-tokens",
        "12",
        "--out",
        str(tmp_path),
    )
    report = json.loads((tmp_path / "unused-draft.json").read_text())
    assert report["pass_cost_with_draft_loaded"] > 0 and report["auto_vs_off"] > 0
    assert report["greedy_outputs_identical"] is True and len(report["rows"]) == report["rounds"]
    assert "Auto / off" in out.stdout


@pytest.mark.slow  # the real window and engine process
def test_window_bench_streams_in_the_real_window_and_the_cli(tmp_path: Path) -> None:
    out = _bench("window", "--max-tokens", "16", "--out", str(tmp_path))
    report = json.loads((tmp_path / "window.json").read_text())
    assert len(report["window"]) == len(report["cli"]) == report["rounds"]
    assert min(report["window"] + report["cli"]) > 0
    assert report["window_tok_s"] == pytest.approx(statistics.median(report["window"]), abs=0.06)
    assert report["cli_tok_s"] == pytest.approx(statistics.median(report["cli"]), abs=0.06)
    ratios = [w / c for w, c in zip(report["window"], report["cli"])]
    assert report["window_vs_cli"] == pytest.approx(statistics.median(ratios), abs=6e-4)
    assert re.fullmatch(r"\d+ threads?(: .+)?", report["window_threads"])
    assert "window / CLI" in out.stdout


def test_attention_bench_compares_flash_attention_off_and_on(models, tmp_path: Path) -> None:
    out = _bench(
        "attention",
        "--target",
        str(models.target),
        "--max-tokens",
        "8",
        "--draft-max",
        "4",
        "--repeats",
        "2",
        "--out",
        str(tmp_path),
    )
    report = json.loads((tmp_path / "attention.json").read_text())
    assert {(r["prompt"], r["mode"]) for r in report["rows"]} == {
        (p, m) for p in ("shallow", "deep") for m in ("off", "auto")
    }
    rows = {r["prompt"]: r for r in report["rows"]}
    assert rows["deep"]["prompt_tokens"] > rows["shallow"]["prompt_tokens"]  # a conversation's last turn
    for row in report["rows"]:  # each figure is the median of the runs the report lists
        off, on = (report["runs"][f"{row['prompt']} / {row['mode']} / flash {k}"] for k in ("off", "on"))
        assert min(off + on) > 0
        assert row["flash_off_tokens_per_s"] == pytest.approx(statistics.median(off), abs=0.06)
        assert row["flash_on_tokens_per_s"] == pytest.approx(statistics.median(on), abs=0.06)
        assert row["off_vs_on"] == pytest.approx(statistics.median(a / b for a, b in zip(off, on)), abs=6e-4)
    assert all(len(v) == 2 for v in report["runs"].values())
    assert "| deep |" in out.stdout


def test_each_round_runs_every_fixed_mode_once_and_off_and_auto_around_the_same_moment() -> None:
    from desktop_app.bench.runner import _round_order, modes_for
    from desktop_app.engine.api import DrafterKind

    modes = modes_for([4, 8, 12], [DrafterKind.NGRAM, DrafterKind.NGRAM_MAP], None)
    firsts, units = set(), set()
    for turn in range(len(modes)):
        order = [m.name for m in _round_order(modes, turn)]
        assert sorted(order) == sorted([*(m.name for m in modes), "off", "auto"])  # off and Auto twice
        start = min(order.index("off"), order.index("auto"))
        units.add(tuple(order[start : start + 4]))
        firsts.add(order[0])
    assert units == {("off", "auto", "auto", "off"), ("auto", "off", "off", "auto")}
    assert len(firsts) > 2  # the fixed modes rotate too


def test_a_steady_drift_of_the_machine_does_not_tilt_auto_against_off() -> None:
    """The machine slows 5% per run while Auto and off are in truth equally fast: the bench
    says 1.00x (the two runs of each, around the same moment, cancel the drift)."""
    from desktop_app.bench.runner import RunResult, _paired_ratio

    rows = []
    for slot in range(1, 6):
        order = ["off", "auto", "auto", "off"] if slot % 2 else ["auto", "off", "off", "auto"]
        for i, mode in enumerate(order):
            speed = 100.0 * (1 - 0.05 * (4 * slot + i))
            rows.append(RunResult("chat", 0, mode, speed, 64, 0.0, 1.0, slot=slot))
    assert _paired_ratio(rows, "auto", "off") == 1.0


def test_a_replay_times_every_mode_s_passes_by_the_cost_table(default_model: Path, tmp_path: Path) -> None:
    """The bench replayed at a cost table: the same greedy answers in every mode, off's answer
    costs 10 ms a pass, one pass a token, and Auto, drafting copies of a rewrite's prompt, answers
    in fewer passes, faster; a cost table that a drafting pass makes dearer loses it."""
    prompts = tmp_path / "prompts.json"
    text = "The old lighthouse stood on the rocky shore for more than a hundred years, and every night its keeper lit the lamp."
    prompts.write_text(json.dumps({"rewrite": [f"Repeat this sentence exactly: {text}"]}))

    def replay(*tables: str) -> dict:
        out = _lab(
            "replay",
            *tables,
            "--target",
            str(default_model),
            "--prompts",
            str(prompts),
            "--max-tokens",
            "32",
            "--draft-max",
            "4",
            "8",
            "--out",
            str(tmp_path / "out"),
            timeout=300,
        )
        assert out.returncode == 0, out.stderr
        assert "In total time over all answers" in out.stdout
        return json.loads((tmp_path / "out" / "replay.json").read_text())

    cheap = ",".join(str(10 + 2 * b) for b in range(9))  # a pass of b + 1 rows: 10 + 2b ms
    dear = ",".join(str(10 + 40 * b) for b in range(9))  # each drafted row costs 4 tokens
    report = replay(cheap, dear)
    cheap_table, dear_table = report["tables"]
    summary = cheap_table["summary"]["rewrite"]
    assert summary["identical_at_t0"] is True
    off = summary["off"]  # every pass one row at 10 ms (the last one gives the end of the answer), no noise
    assert off["median_tokens_per_s"] == pytest.approx(100.0 * off["tokens_per_pass"], rel=1e-3)
    assert summary["auto"]["tokens_per_pass"] > 2 and summary["auto"]["speedup_vs_off"] > 1.5
    assert cheap_table["time_weighted"]["rewrite"]["auto_vs_off"] > 1.5
    assert dear_table["summary"]["rewrite"]["auto"]["mean_k"] == 0  # nothing pays: Auto drafts nothing
    assert dear_table["summary"]["rewrite"]["auto"]["speedup_vs_off"] == pytest.approx(1.0)

    bad = _lab("replay", "10,abc", timeout=60)
    assert bad.returncode != 0 and "comma-separated milliseconds" in bad.stderr
    short = _lab(
        "replay",
        "10,12,14",
        "--target",
        str(default_model),
        "--prompts",
        str(prompts),
        "--draft-max",
        "8",
        "--out",
        str(tmp_path / "short"),
        timeout=120,
    )
    assert short.returncode != 0 and "needs 9 pass costs" in short.stderr


def test_the_lab_has_a_subcommand_per_bench_with_the_bench_options() -> None:
    from lab.cli import BENCHES, build_parser

    parser = build_parser()
    assert set(BENCHES) == {
        "replay",
        "attention",
        "unused-draft",
        "peer",
        "peer-api",
        "copies",
        "repeat",
        "overhead",
        "api-overhead",
        "load",
        "remote",
        "window",
        "field",
    }
    replay = parser.parse_args(["replay", "10,12", "20,30", "--draft-max", "4", "8", "--repeats", "2"])
    assert replay.replay == [[10.0, 12.0], [20.0, 30.0]] and replay.draft_max == [4, 8] and replay.repeats == 2
    assert parser.parse_args(["peer", "build/bin"]).peer == Path("build/bin")
    assert parser.parse_args(["peer-api", "build/bin"]).peer == Path("build/bin")
    assert parser.parse_args(["repeat", "10,12"]).replay == [[10.0, 12.0]]
    field = parser.parse_args(["field", "busy", "interleaved", "--loads", "busy,llama", "--doc-tokens", "2500"])
    assert (field.scenarios, field.repeats, field.loads) == (["busy", "interleaved"], 5, ["busy", "llama"])
    assert field.doc_tokens == [2500] and field.read_tokens == [2500, 6000, 26000] and field.answer_tokens == 2000
    assert parser.parse_args(["field", "all", "--rounds", "1"]).repeats == 1
    for name in set(BENCHES) - {"replay", "peer", "peer-api", "copies", "repeat", "field"}:
        args = parser.parse_args([name, "--max-tokens", "8", "--out", "x"])
        assert (args.bench, args.max_tokens, args.out) == (name, 8, Path("x"))


def test_the_peer_bench_counts_a_text_s_tokens_with_the_model_s_vocabulary(models) -> None:
    """Both servers' answers are counted alike; the counter keeps its vocabulary alive (a freed
    one crashed the bench on its first answer)."""
    import gc

    from lab.peer_api import token_counter

    count = token_counter(Path(models.target))
    gc.collect()
    assert count("") == 0
    assert 1 <= count("Hello world") <= count("Hello world, hello again, world") < 40


def test_llama_server_keeps_its_weights_out_of_amx_only_on_a_cpu_with_amx() -> None:
    """On an AMX CPU llama.cpp's stock build crashes at its first decode: the peer bench starts
    it with ``--no-repack`` there (as our patched build keeps weights out of AMX), elsewhere as is."""
    from lab.peer_api import peer_cpu_flags

    assert peer_cpu_flags("flags\t\t: fpu avx512f amx_bf16 amx_tile amx_int8") == ["--no-repack"]
    assert peer_cpu_flags("flags\t\t: fpu sse2 avx2 avx512f") == []


def test_each_peer_round_asks_every_new_prompt_starting_from_another_one() -> None:
    """A round's new-prompt figure covers every prompt of its category (one 128-token answer
    moves several % between identical requests), and each round starts the category elsewhere,
    so no prompt is always the first a fresh server sees."""
    from lab.peer_api import REPEATS, _steps, rotated

    prompts = {"code": ["c0", "c1", "c2"], "rewrite": ["r0", "r1"], "chat": ["h0"]}
    assert [rotated(prompts["code"], r) for r in range(4)] == [
        ["c0", "c1", "c2"],
        ["c1", "c2", "c0"],
        ["c2", "c0", "c1"],
        ["c0", "c1", "c2"],
    ]
    steps = _steps({c: rotated(ps, 1) for c, ps in prompts.items()}, 128)
    new = [(w, m[0]["content"]) for w, m, _ in steps if w.startswith("new")]
    assert new == [
        ("new code", "c1"),
        ("new code", "c2"),
        ("new code", "c0"),
        ("new rewrite", "r1"),
        ("new rewrite", "r0"),
        ("new chat", "h0"),
    ]
    repeats = [m[0]["content"] for w, m, _ in steps if w == "repeat"]
    assert repeats == ["c1 (again)"] * REPEATS
