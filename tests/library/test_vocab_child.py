"""The library's vocabulary checks run in a child process: the same verdicts as the engine's
check in this process, and a file that crashes llama.cpp gives a verdict saying so instead of
taking the caller (the model library window) down."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_app.engine import check_pairs
from desktop_app.engine.errors import ModelLoadError
from desktop_app.library.errors import CheckerCrashed
from desktop_app.library.local import compatibility_matrix, describe
from desktop_app.library.vocab import check_pair, checked_pairs, in_child

CRASHING = "tests.library.crashing_checker:check_pairs"


def test_the_checks_run_in_a_child_process_with_the_engines_verdicts(models) -> None:
    files = [models.target, models.draft, models.draft_other_vocab, models.unknown_arch, models.thinking]
    pairs = [(0, 1), (0, 2), (0, 3), (4, 1)]

    assert in_child("tests.library.crashing_checker:checker_pid") != os.getpid()
    here = check_pairs(files, pairs)
    assert checked_pairs(files, pairs) == here
    assert here[0][0].compatible and not here[1][0].compatible and here[3][0].compatible
    assert "could not read the vocabulary of unknown-arch.gguf" in here[2][0].summary() and here[2][1] is None


def test_the_matrix_loads_no_llama_cpp_in_the_callers_process(models, tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from desktop_app.library.local import compatibility_matrix, describe\n"
        "if __name__ == '__main__':\n"
        f"    found = [describe(p) for p in {[str(models.target), str(models.draft)]!r}]\n"
        "    [v] = compatibility_matrix(found)\n"
        "    print(v.compatibility.compatible, sorted(m for m in sys.modules if m.startswith('llama_cpp')))\n"
    )
    script = tmp_path / "matrix.py"
    script.write_text(code)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180)

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "[]"]


def test_a_file_that_crashes_the_checker_gets_a_verdict_that_says_so(models, tmp_path: Path) -> None:
    files = [tmp_path / name for name in ("target.gguf", "draft.gguf", "crash-draft.gguf", "pair-crash-draft.gguf")]
    for source, copy in zip((models.target, models.draft, models.draft, models.draft), files):
        shutil.copy(source, copy)
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2)]

    checks = checked_pairs(files, pairs, job=CRASHING)

    assert checks[0] == check_pairs(files[:2], [(0, 1)])[0] and checks[0][0].compatible
    assert checks[1][0].reasons == ["checking crash-draft.gguf crashed the checker: killed by SIGSEGV"]
    assert checks[2][0].reasons == [
        "checking target.gguf with pair-crash-draft.gguf crashed the checker: killed by SIGSEGV"
    ]
    assert checks[3][0].reasons == checks[1][0].reasons
    assert all(drafting is None for _verdict, drafting in checks[1:])


def test_the_matrix_of_a_crashing_file_still_lists_every_pair(models, tmp_path: Path, monkeypatch) -> None:
    target, crash = tmp_path / "target.gguf", tmp_path / "crash-draft.gguf"
    shutil.copy(models.target, target)
    shutil.copy(models.draft, crash)
    monkeypatch.setattr("desktop_app.library.vocab.JOB_PAIRS", CRASHING)

    [verdict] = compatibility_matrix([describe(target), describe(crash)])

    assert not verdict.compatibility.compatible and verdict.drafting is None
    assert verdict.compatibility.summary() == "checking crash-draft.gguf crashed the checker: killed by SIGSEGV"


def test_check_pair_raises_what_the_child_raised(models) -> None:
    verdict, drafting = check_pair(models.target, models.draft)
    assert verdict.compatible and drafting.summary().startswith("Draft model")
    with pytest.raises(ModelLoadError, match="not-a-model.gguf"):
        check_pair(models.target, models.not_gguf)
    with pytest.raises(CheckerCrashed, match="the vocabulary checker crashed before its first file"):
        checked_pairs([models.target, models.draft], [(0, 1)], job="tests.library.no_such_module:check_pairs")
