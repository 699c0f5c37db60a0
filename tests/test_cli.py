"""The ``specchat`` command line, run as users run it (a real subprocess)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

STATS_KEYS = {
    "generated_tokens",
    "decode_tokens_per_s",
    "ttft_s",
    "drafted",
    "accepted",
    "acceptance_rate",
    "target_passes",
    "mode",
    "draft_max",
}


def specchat(*args: str, timeout: int = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "desktop_app", *args], capture_output=True, text=True, timeout=timeout)


def test_generate_json_with_a_draft_model(models) -> None:
    out = specchat(
        "generate",
        "--target",
        str(models.target),
        "--draft",
        str(models.draft),
        "--spec",
        "on",
        "--draft-max",
        "3",
        "--prompt",
        "Hello",
        "--max-tokens",
        "12",
        "--temperature",
        "0",
        "--seed",
        "1",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == {"text", "token_ids", "stats"}
    assert STATS_KEYS <= set(data["stats"])
    assert len(data["token_ids"]) == 12
    assert data["stats"]["mode"] == "on" and data["stats"]["draft_max"] == 3 and data["stats"]["drafted"] > 0
    assert "warning" not in out.stderr  # SpecChat's own llama.cpp build: nothing to warn about


def test_spec_off_and_on_print_the_same_text(models) -> None:
    base = [
        "generate",
        "--target",
        str(models.target),
        "--draft",
        str(models.draft),
        "--prompt",
        "Hi",
        "--max-tokens",
        "20",
        "--json",
    ]
    off = json.loads(specchat(*base, "--spec", "off").stdout)
    on = json.loads(specchat(*base, "--spec", "on").stdout)
    assert off["token_ids"] == on["token_ids"]


def test_a_seed_prints_the_same_sampled_text_with_spec_off_on_and_auto(models) -> None:
    base = ["generate", "--target", str(models.target), "--draft", str(models.draft), "--prompt", "Hi"]
    sampled = [*base, "--max-tokens", "20", "--temperature", "0.8", "--draft-max", "3", "--json"]
    off, on, auto = (
        json.loads(specchat(*sampled, "--seed", "5", "--spec", spec).stdout) for spec in ("off", "on", "auto")
    )
    assert off["token_ids"] == on["token_ids"] == auto["token_ids"]
    assert on["stats"]["drafted"] > on["stats"]["accepted"] > 0  # drafts kept and refused, the text the same
    other = json.loads(specchat(*sampled, "--seed", "6", "--spec", "off").stdout)
    assert other["token_ids"] != off["token_ids"]


def test_messages_file_and_raw_prompt(models, tmp_path: Path) -> None:
    messages = tmp_path / "chat.json"
    messages.write_text(json.dumps([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]))
    out = specchat(
        "generate", "--target", str(models.target), "--messages", str(messages), "--max-tokens", "4", "--json"
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["stats"]["prompt_tokens"] > 10
    raw = specchat("generate", "--target", str(models.target), "--prompt", "Hi", "--raw", "--max-tokens", "4", "--json")
    assert json.loads(raw.stdout)["stats"]["prompt_tokens"] == 1  # "Hi" alone, no template


@pytest.mark.slow  # loads the default model in a subprocess
def test_default_model_is_used_without_target() -> None:
    out = specchat(
        "generate", "--prompt", "Say hello.", "--max-tokens", "8", "--spec", "on", "--drafter", "ngram", "--json"
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["text"].strip()


@pytest.mark.parametrize(
    "args,message",
    [
        (["--target", "{not_gguf}"], "not a GGUF model file"),
        (["--target", "{truncated}"], "is truncated"),
        (["--target", "{target}", "--draft", "{draft_other_vocab}"], "incompatible"),
        (["--target", "{target}", "--messages", "/nonexistent.json"], "messages file not found"),
        (["--target", "{target}", "--temperature", "-1"], "temperature must be"),
        (["--target", "{target}", "--drafter", "model"], "--drafter model needs --draft"),
    ],
)
def test_errors_are_one_line_without_traceback(models, args: list[str], message: str) -> None:
    filled = [a.format(**{k: str(v) for k, v in vars(models).items()}) for a in args]
    if "--messages" not in filled:
        filled += ["--prompt", "Hi"]
    out = specchat("generate", *filled, "--max-tokens", "4")
    assert out.returncode == 1
    assert message in out.stderr
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


@pytest.mark.slow  # the self-test loads models in a subprocess
def test_self_test_passes() -> None:
    out = specchat("--self-test")
    assert out.returncode == 0, out.stderr
    assert "backend: CPU" in out.stdout or "backend:" in out.stdout
    assert "identical" in out.stdout


@pytest.mark.slow  # loads the default model in two subprocesses
def test_raw_prompts_turn_special_token_texts_into_special_tokens() -> None:
    chatml = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    parsed = specchat("generate", "--raw", "--prompt", chatml, "--max-tokens", "6", "--spec", "off", "--json")
    literal = specchat(
        "generate", "--raw", "--literal", "--prompt", chatml, "--max-tokens", "6", "--spec", "off", "--json"
    )
    assert parsed.returncode == 0 and literal.returncode == 0, parsed.stderr + literal.stderr
    as_tokens = json.loads(parsed.stdout)["stats"]["prompt_tokens"]
    as_text = json.loads(literal.stdout)["stats"]["prompt_tokens"]
    assert as_tokens <= 10 < 20 <= as_text  # 4 special tokens, not ~24 tokens of "<|im_start|>" text
    assert json.loads(parsed.stdout)["text"] != json.loads(literal.stdout)["text"]


def test_cli_defaults_are_the_apps() -> None:
    from desktop_app.cli import _build_parser
    from desktop_app.engine.api import DEFAULT_SPEC_MODE, DRAFT_K, MAX_TOKENS
    from desktop_app.store.settings import BY_NAME

    args = _build_parser().parse_args(["generate", "--prompt", "x"])
    assert args.spec == DEFAULT_SPEC_MODE.value == BY_NAME["spec_mode"].default == "auto"
    assert args.max_tokens == MAX_TOKENS.default == BY_NAME["max_tokens"].default == 512
    assert args.draft_max == DRAFT_K.default == BY_NAME["draft_max"].default


@pytest.mark.slow  # generates with the default model in a subprocess
def test_auto_reports_the_users_maximum_k() -> None:
    out = specchat(
        "generate",
        "--prompt",
        "Repeat exactly: one two three four five six seven eight.",
        "--spec",
        "auto",
        "--draft-max",
        "2",
        "--drafter",
        "ngram",
        "--max-tokens",
        "24",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["stats"]["draft_max"] == 2


def test_auto_picks_the_built_in_mtp_drafter_and_says_so(hybrid_models) -> None:
    out = specchat(
        "generate",
        "--target",
        str(hybrid_models.hybrid_mtp),
        "--prompt",
        "Tell me a story.",
        "--spec",
        "auto",
        "--max-tokens",
        "32",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    stats = json.loads(out.stdout)["stats"]
    assert stats["mode"] == "auto" and stats["drafter"] == "mtp"


def test_mtp_is_offered_only_where_the_target_has_it(hybrid_models) -> None:
    ok = specchat(
        "generate",
        "--target",
        str(hybrid_models.hybrid_mtp),
        "--drafter",
        "mtp",
        "--spec",
        "on",
        "--draft-max",
        "2",
        "--prompt",
        "Hi",
        "--max-tokens",
        "12",
        "--json",
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["stats"]["drafter"] == "mtp" and json.loads(ok.stdout)["stats"]["drafted"] > 0
    missing = specchat(
        "generate", "--target", str(hybrid_models.hybrid), "--drafter", "mtp", "--prompt", "Hi", "--max-tokens", "4"
    )
    assert missing.returncode == 1
    assert "--drafter mtp is not available" in missing.stderr and len(missing.stderr.strip().splitlines()) == 1


def test_a_target_that_cannot_roll_back_gets_one_line_and_an_answer(hybrid_models) -> None:
    out = specchat(
        "generate",
        "--target",
        str(hybrid_models.no_rollback),
        "--prompt",
        "Hi",
        "--spec",
        "on",
        "--max-tokens",
        "6",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    notes = [line for line in out.stderr.splitlines() if "cannot roll back" in line]
    assert len(notes) == 1 and notes[0].startswith("specchat: note: ")
    data = json.loads(out.stdout)
    assert len(data["token_ids"]) == 6 and data["stats"]["drafter"] == "none"


def test_models_pair_says_which_drafting_a_pair_supports(hybrid_models, gemma4_pair, models) -> None:
    mtp = specchat("models", "pair", str(hybrid_models.hybrid_mtp), str(hybrid_models.draft))
    assert "  drafting: Built-in (MTP), Draft model, Prompt lookup" in mtp.stdout
    assert "built-in MTP layers" in mtp.stdout
    gemma = specchat("models", "pair", *map(str, gemma4_pair))
    assert "drafting: Gemma 4 assistant, Prompt lookup" in gemma.stdout
    wrong = specchat("models", "pair", str(models.target), str(gemma4_pair[1]))
    assert "needs a gemma4 target, not llama" in wrong.stdout


def test_a_looping_chat_template_is_a_clear_error_within_seconds(models) -> None:
    import time

    start = time.perf_counter()
    out = specchat("generate", "--target", str(models.looping_template), "--prompt", "Hi", "--max-tokens", "4")
    assert time.perf_counter() - start < 10
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "looping-template.gguf" in lines[0] and "did not finish rendering" in lines[0]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_numbers_get_the_engines_own_message(value: str) -> None:
    from desktop_app.engine.api import SamplingParams

    with pytest.raises(ValueError) as api:
        SamplingParams(temperature=float(value))
    out = specchat("generate", "--prompt", "Hi", f"--temperature={value}")
    assert out.returncode == 1 and str(api.value) in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


@pytest.mark.slow  # loads llama.cpp and the default model in a subprocess
def test_bytes_that_are_not_text_are_named_in_the_users_prompt() -> None:
    out = subprocess.run(
        [sys.executable.encode(), b"-m", b"desktop_app", b"generate", b"--prompt", b"caf\xe9!", b"--max-tokens", b"4"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 1
    assert "message 1 (user) has a character that is not valid text (U+DCE9) at character 4 of 5" in out.stderr


@pytest.mark.slow  # loads llama.cpp in a subprocess
def test_a_folder_is_not_a_model(tmp_path: Path) -> None:
    out = specchat("generate", "--target", str(tmp_path), "--prompt", "Hi")
    assert out.returncode == 1 and "is a folder, not a GGUF model file" in out.stderr


def test_missing_qt_libraries_are_one_line_not_a_traceback(tmp_path: Path) -> None:
    # Stands in for a system without Qt's libraries: PySide6 fails to import, as it does then.
    fake = tmp_path / "PySide6"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('libEGL.so.1: cannot open shared object file')\n")
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "desktop_app"], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines() == [out.stderr.strip()]
    assert "the window cannot start: libEGL.so.1" in out.stderr and "ensure-qt-libs.sh" in out.stderr


HUGE = "9" * 400


@pytest.mark.parametrize(
    "args,parameter",
    [
        (["generate", "--prompt", "Hi", "--max-tokens", HUGE], "max_tokens"),
        (["generate", "--prompt", "Hi", "--seed", HUGE], "seed"),
        (["generate", "--prompt", "Hi", "--threads", HUGE], "n_threads"),
        (["generate", "--prompt", "Hi", "--ctx", HUGE], "n_ctx"),
        (["generate", "--prompt", "Hi", "--top-k", HUGE], "top_k"),
        (["generate", "--prompt", "Hi", "--draft-max", HUGE], "draft_max"),
        (["generate", "--prompt", "Hi", "--n-gpu-layers", HUGE], "n_gpu_layers"),
        (["generate", "--prompt", "Hi", "--temperature", HUGE], "temperature"),
        (["generate", "--prompt", "Hi", "--workers", f"127.0.0.1:{HUGE}"], "worker_port"),
        (["serve", "--port", HUGE], "api_port"),
        (["worker", "--port", HUGE], "worker_port"),
        (["worker", "--threads", HUGE], "n_threads"),
        (["bench", "--repeats", HUGE], "repeats"),
        (["bench", "--quiet-wait", HUGE], "quiet_wait"),
    ],
    ids=lambda v: v if isinstance(v, str) else " ".join(a for a in v if a != HUGE and not a.endswith(HUGE)),
)
def test_a_400_digit_number_is_one_line_naming_the_flag(args: list[str], parameter: str) -> None:
    out = specchat(*args, timeout=60)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert f"argument {args[-2]}: " in lines[0] and f"{parameter} must be between " in lines[0]


@pytest.mark.parametrize("value", ["abc", "1e999", "nan", "9" * 5000], ids=["abc", "1e999", "nan", "5000 digits"])
def test_a_bad_seed_names_the_seed_and_its_range(value: str) -> None:
    out = specchat("generate", "--prompt", "Hi", "--seed", value, timeout=60)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert "argument --seed: seed must be " in out.stderr and " 0 and 9223372036854775807, not " in out.stderr


@pytest.mark.parametrize(
    "command", [["models", "list"], ["models", "pull", "owner/repo", "x.gguf"]], ids=["models list", "models pull"]
)
def test_a_home_that_cannot_be_created_is_one_line(tmp_path: Path, command: list[str]) -> None:
    blocker = tmp_path / "file"  # a real state even root cannot write through
    blocker.write_text("")
    env = {**__import__("os").environ, "SPECCHAT_HOME": str(blocker / "home")}
    out = subprocess.run(
        [sys.executable, "-m", "desktop_app", *command], capture_output=True, text=True, timeout=60, env=env
    )
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.splitlines() == [
        f"specchat: error: SpecChat cannot create its folder {blocker / 'home' / 'data'} (Not a directory): "
        f"{blocker} is a file, not a folder: move it away, or set SPECCHAT_HOME to a folder you can write to"
    ]


def test_a_foreign_llama_cpp_build_is_one_warning_line_and_ours_none() -> None:
    from desktop_app.cli import build_warning_line
    from desktop_app.engine.llama.backend import BackendInfo

    assert build_warning_line(BackendInfo("CPU", False)) is None
    foreign = BackendInfo("CPU", False, build_gaps=("no RPC backend: workers are unavailable",))
    line = build_warning_line(foreign)
    assert line == (
        "specchat: warning: this llama-cpp-python is not SpecChat's build (no RPC backend: workers "
        "are unavailable): rebuild it with `make setup`"
    )
    assert "\n" not in line


LAB_FLAGS = {
    "--replay",
    "--attention",
    "--unused-draft",
    "--peer",
    "--overhead",
    "--api-overhead",
    "--load",
    "--remote",
    "--window",
}


def test_bench_help_lists_only_the_user_s_options_and_no_lab_bench() -> None:
    bench = specchat("bench", "--help", timeout=60)
    assert bench.returncode == 0, bench.stderr
    assert set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", bench.stdout)) == {
        "--help",
        "--target",
        "--draft",
        "--drafter",
        "--n-gpu-layers",
        "--draft-n-gpu-layers",
        "--ctx",
        "--threads",
        "--workers",
        "--split",
        "--prompts",
        "--draft-max",
        "--max-tokens",
        "--repeats",
        "--categories",
        "--out",
        "--quiet-wait",
    }
    top = specchat("--help", timeout=60)
    assert top.returncode == 0 and "bench" in top.stdout
    assert not LAB_FLAGS & set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", top.stdout))
    lab_flag = specchat("bench", "--replay", "10,12", timeout=60)  # the lab's benches are `python -m lab ...`
    assert lab_flag.returncode == 1 and "unrecognized arguments: --replay" in lab_flag.stderr


def test_repeat_penalty_changes_greedy_output_and_a_bad_one_is_refused(models) -> None:
    def tokens(*extra: str) -> list[int]:
        out = specchat(
            "generate", "--target", str(models.target), "--prompt", "List the days of the week, then again.",
            "--max-tokens", "48", "--spec", "off", "--json", *extra, timeout=120,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)["token_ids"]

    assert tokens("--repeat-penalty", "0.5") != tokens()  # below 1 it favours the prompt's tokens
    bad = specchat("generate", "--prompt", "Hi", "--repeat-penalty", "0", timeout=60)
    assert bad.returncode == 1 and "repeat_penalty must be above 0.0 and at most 10.0, not 0.0" in bad.stderr
