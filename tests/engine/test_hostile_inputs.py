"""Hostile templates and odd input never hang the engine and are named in terms of the user's text."""

from __future__ import annotations

import math
import time
from typing import Any

import pytest

from desktop_app.engine import Engine, ModelLoadError, TemplateError
from desktop_app.engine.api import SamplingParams
from desktop_app.engine.llama.chat_template import ChatTemplate
from tests.helpers import run, user


def test_a_looping_template_fails_within_its_budget_and_the_engine_stays_usable(models: Any) -> None:
    engine = Engine()
    try:
        engine.load_target(models.looping_template)
        start = time.perf_counter()
        with pytest.raises(TemplateError) as caught:
            run(engine, messages=user("Hello"), max_tokens=4)
        assert time.perf_counter() - start < 10
        message = str(caught.value)
        assert "looping-template.gguf" in message and "did not finish rendering" in message and "\n" not in message
        # raw prompts need no template: the same model still answers, and another model loads
        raw, _ = run(engine, prompt="Hello", max_tokens=4)
        assert len(raw.token_ids) == 4
        engine.load_target(models.target)
        fine, _ = run(engine, messages=user("Hello"), max_tokens=4)
        assert len(fine.token_ids) == 4
    finally:
        engine.close()


@pytest.mark.parametrize(
    "source,words",
    [
        ("{{ 'x' * 1000000000 }}", "too large to hold"),
        ("{% for i in range(100000) %}{{ 'y' * 100000 }}{% endfor %}", "more than 8,000,000 characters"),
    ],
)
def test_memory_bombs_are_stopped_before_they_allocate(source: str, words: str) -> None:
    with pytest.raises(TemplateError, match=words):
        ChatTemplate(source, origin="bomb.gguf").render([{"role": "user", "content": "x"}])


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_are_refused_with_the_ranges_message(value: float) -> None:
    with pytest.raises(ValueError, match=r"^temperature must be a finite number between 0\.0 and 5\.0"):
        SamplingParams(temperature=value)
    with pytest.raises(ValueError, match=r"^top_p must be a finite number above 0\.0 and at most 1\.0"):
        SamplingParams(top_p=value)


def test_a_broken_character_is_named_in_the_users_message(default_engine: Engine) -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Look: \ud800 here"},
    ]
    with pytest.raises(ValueError) as caught:
        run(default_engine, messages=messages, max_tokens=4)
    assert str(caught.value).startswith(
        "message 3 (user) has a character that is not valid text (U+D800) at character 7 of 12, after 'Look: '"
    )


def test_a_folder_given_as_a_model_is_called_a_folder(tmp_path: Any) -> None:
    with pytest.raises(ModelLoadError, match="is a folder, not a GGUF model file"):
        Engine().load_target(tmp_path)
