"""The ``specchat`` command line's errors, run as users run it (a real subprocess): one line
that names the cause, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_run import specchat


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
        (["serve", "--prompt-cache-mb", HUGE], "prompt_cache_mb"),
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
