"""Issue 46, point 5: the system prompt is part of the prompt. One too long for the context is
refused in its own words (a 10 MB one was reported as the chat template's fault), quickly."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from desktop_app.engine import ContextOverflowError, Engine, GenerateRequest, ModelOptions
from desktop_app.engine.api import Message

N_CTX = 256


@pytest.fixture(scope="module")
def engine(models) -> Iterator[Engine]:
    engine = Engine()
    engine.load_target(models.target, ModelOptions(n_ctx=N_CTX))
    yield engine
    engine.close()


def _ask(system: str) -> GenerateRequest:
    messages = [Message(role="system", content=system), Message(role="user", content="Hi")]
    return GenerateRequest(messages=messages, max_tokens=8)


def test_a_10_mb_system_prompt_is_named_not_blamed_on_the_template(engine: Engine) -> None:
    start = time.perf_counter()
    with pytest.raises(ContextOverflowError) as error:
        engine.build_prompt(_ask("x" * 10_000_000))
    assert time.perf_counter() - start < 1.0
    assert str(error.value) == (
        f"The system prompt is 10,000,000 characters long, more than any context holds (this one {N_CTX} tokens): "
        "shorten the system prompt"
    )


def test_a_system_prompt_longer_than_the_context_is_named_in_tokens(engine: Engine) -> None:
    with pytest.raises(
        ContextOverflowError, match=r"^The system prompt is [\d,]+ tokens long but the context holds 256"
    ):
        engine.build_prompt(_ask("the robot walked to town " * 200))


def test_a_system_prompt_that_fits_still_works(engine: Engine) -> None:
    tokens, dropped = engine.build_prompt(_ask("Be brief. " * 5))
    assert 0 < len(tokens) < N_CTX and dropped == 0
