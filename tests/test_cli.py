"""The ``specchat`` command line, run as users run it (a real subprocess): generating, its
defaults and help. (Drafting choices: test_cli_drafting.py; errors: test_cli_errors.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli_run import specchat

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
        "--prompt-cache-mb",
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
    assert bad.returncode == 1 and "repeat_penalty must be between 0.1 and 10.0, not 0.0" in bad.stderr
