"""The ``specchat`` command line's drafting choices, run as users run it (a real subprocess):
Auto's maximum k, the built-in MTP drafter, targets that cannot roll back, and which drafting
a pair of models supports."""

from __future__ import annotations

import json

import pytest

from desktop_app.engine.api import DRAFT_K
from tests.cli_run import specchat


@pytest.mark.slow  # generates with the default model in a subprocess
def test_auto_reports_the_longest_copy_it_may_draft_whatever_the_users_k() -> None:
    """Auto drafts copied text up to DRAFT_K.high at a time (docs/auto.md); --draft-max bounds
    drafters that run a model and the k of speculation on."""
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
    assert json.loads(out.stdout)["stats"]["draft_max"] == DRAFT_K.high


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
    assert "  drafting: Built-in drafter, Draft model, Repeats from this chat" in mtp.stdout
    assert "built-in MTP layers" in mtp.stdout
    gemma = specchat("models", "pair", *map(str, gemma4_pair))
    assert "drafting: Gemma 4 assistant, Repeats from this chat" in gemma.stdout
    wrong = specchat("models", "pair", str(models.target), str(gemma4_pair[1]))
    assert "needs a gemma4 target, not llama" in wrong.stdout
