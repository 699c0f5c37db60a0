"""Continue an answer (GenerateRequest.continue_answer): the prompt ends inside the assistant's turn
with the answer's text, and what comes next is what one longer answer would have said."""

from __future__ import annotations

import pytest

from desktop_app.engine import Engine, GenerateRequest
from desktop_app.engine.api import FinishReason, SpecMode
from tests.helpers import run, user

QUESTION = "Tell me a story about a robot who learns to paint."


@pytest.mark.parametrize("spec", [SpecMode.OFF, SpecMode.ON])
def test_greedy_continuation_equals_one_longer_answer(default_engine: Engine, spec: SpecMode) -> None:
    whole, _ = run(default_engine, messages=user(QUESTION), max_tokens=40, spec=spec)
    cut, _ = run(default_engine, messages=user(QUESTION), max_tokens=15, spec=spec)
    assert cut.stats.finish_reason is FinishReason.LENGTH
    assert whole.text.startswith(cut.text)
    more, _ = run(
        default_engine,
        messages=[*user(QUESTION), {"role": "assistant", "content": cut.text}],
        max_tokens=25,
        spec=spec,
        continue_answer=True,
    )
    assert cut.text + more.text == whole.text
    assert more.stats.prompt_tokens == cut.stats.prompt_tokens + cut.stats.generated_tokens


def test_the_prompt_ends_with_the_answer_in_its_open_turn(default_engine: Engine) -> None:
    messages = [*user("Hi"), {"role": "assistant", "content": "Hello! I am"}]
    default_engine.build_prompt(GenerateRequest(messages=messages, continue_answer=True))
    text = default_engine.prompts.last_text
    assert text.endswith("<|im_start|>assistant\nHello! I am"), text[-80:]
    assert text.count("<|im_start|>assistant") == 1


def test_continue_needs_an_answer_last() -> None:
    with pytest.raises(ValueError, match="to continue an answer"):
        GenerateRequest(messages=user("Hi"), continue_answer=True)
    with pytest.raises(ValueError, match="to continue an answer"):
        GenerateRequest(prompt="Hi", continue_answer=True)


def test_a_thinking_answer_continues_inside_its_thinking(models: object) -> None:
    """The thinking model's prompt opens ``<think>`` and its answer's text starts with it: the
    continued prompt holds it once, and greedy, the parts make the longer answer."""
    engine = Engine()
    try:
        engine.load_target(models.thinking)  # type: ignore[attr-defined]
        ask = user("Hi")
        whole, _ = run(engine, messages=ask, max_tokens=24, spec=SpecMode.OFF, think=True)
        cut, _ = run(engine, messages=ask, max_tokens=10, spec=SpecMode.OFF, think=True)
        assert cut.text.startswith("<think>") and whole.text.startswith(cut.text)
        more, _ = run(
            engine,
            messages=[*ask, {"role": "assistant", "content": cut.text}],
            max_tokens=14,
            spec=SpecMode.OFF,
            think=True,
            continue_answer=True,
        )
        assert engine.prompts.last_text.count("<think>") == 1
        assert cut.text + more.text == whole.text
    finally:
        engine.close()
