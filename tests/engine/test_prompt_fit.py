"""Dropping the oldest turns to fit the context: the same turns as one at a time, in linear time."""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Iterator, Sequence

import pytest

from desktop_app.engine import ContextOverflowError, Engine, GenerateRequest, ModelOptions
from desktop_app.engine.api import Message
from desktop_app.engine.errors import EngineError, PromptFitTimeoutError
from desktop_app.engine.llama.chat_template import validate_messages
from desktop_app.engine.loop.prompt_fit import FitCancelled, PromptFitter, TokenCounts
from tests.helpers import run

N_CTX = 256


@pytest.fixture(scope="module")
def engine(models) -> Iterator[Engine]:
    engine = Engine()
    engine.load_target(models.target, ModelOptions(n_ctx=N_CTX))
    yield engine
    engine.close()


def conversation(turns: int, rng: random.Random | None = None, system: bool = False) -> list[Message]:
    """``turns`` alternating messages ending with a user's; varied lengths when ``rng`` is given."""
    words = "the robot walked to a small town and asked about the weather there".split()
    messages = [Message(role="system", content="Be brief.")] if system else []
    for i in range(turns):
        length = rng.randint(0, 40) if rng else 4
        text = f"turn {i} " + " ".join(rng.choice(words) for _ in range(length)) if rng else f"turn {i} short text here"
        messages.append(Message(role="user" if (turns - i) % 2 else "assistant", content=text))
    return messages


def drop_one_at_a_time(engine: Engine, request: GenerateRequest) -> tuple[list[int], int]:
    """The engine's former algorithm: render the whole conversation once per dropped message."""
    assert engine.target is not None and request.messages is not None
    messages: list[Message] = validate_messages(list(request.messages))
    dropped = 0
    while True:
        tokens = engine.prompts.render(messages)[1]
        if len(tokens) + min(request.max_tokens, 64) <= engine.target.n_ctx:
            return tokens, dropped
        first = 1 if messages[0]["role"] == "system" else 0
        if len(messages) - first <= 1:
            return tokens, dropped
        del messages[first]
        dropped += 1


def test_keeps_the_same_turns_as_dropping_one_at_a_time(engine: Engine) -> None:
    rng = random.Random(7)
    cases = 0
    for turns in (1, 2, 3, 9, 30, 61):
        for system in (False, True):
            messages = conversation(turns, rng, system)
            for max_tokens in (1, 17, 40, 64):
                request = GenerateRequest(messages=messages, max_tokens=max_tokens)
                expected = drop_one_at_a_time(engine, request)
                assert engine.build_prompt(request) == expected, (turns, system, max_tokens)
                cases += expected[1] > 0
    assert cases > 10  # most of them dropped turns


def test_fitting_renders_a_logarithmic_number_of_times(engine: Engine) -> None:
    assert engine.target is not None
    for turns in (1001, 5001):
        fitter = PromptFitter(engine.prompts.render, TokenCounts(engine.prompts.tokenize_text), N_CTX - 16)
        first, _, tokens = fitter.fit(validate_messages(conversation(turns, random.Random(turns))))
        assert first > turns - 60 and len(tokens) <= N_CTX - 16
        assert fitter.renders <= 2 * math.log2(turns) + 4, fitter.renders


def test_a_thousand_turns_at_a_small_context_answer_within_two_seconds(engine: Engine) -> None:
    """Issue 33: 1001 short turns at ctx 256 took 44 s to fit, holding the engine."""
    messages = conversation(1001)
    start = time.perf_counter()
    result, _ = run(engine, messages=messages, max_tokens=4, spec="off")
    elapsed = time.perf_counter() - start
    print(f"1001 turns at ctx {N_CTX}: answered in {elapsed * 1000:.0f} ms, {result.stats.dropped_turns} dropped")
    assert result.stats.dropped_turns > 950 and len(result.token_ids) == 4
    assert elapsed < 2.0


def test_five_thousand_turns_build_quickly(engine: Engine) -> None:
    messages = conversation(5001, random.Random(1), system=True)
    start = time.perf_counter()
    tokens, dropped = engine.build_prompt(GenerateRequest(messages=messages, max_tokens=32))
    elapsed = time.perf_counter() - start
    print(f"5001 turns: prompt built in {elapsed * 1000:.0f} ms, {dropped} dropped")
    one_more = validate_messages([messages[0]] + messages[dropped:])  # the system message, then one more turn
    assert len(tokens) <= N_CTX - 32 < len(engine.prompts.render(one_more)[1])
    assert elapsed < 2.0


def test_a_last_message_longer_than_the_context_is_still_refused(engine: Engine) -> None:
    messages = conversation(40) + [Message(role="assistant", content="ok"), Message(role="user", content="word " * 400)]
    with pytest.raises(ContextOverflowError, match=f"context holds {N_CTX}"):
        engine.build_prompt(GenerateRequest(messages=messages, max_tokens=8))


def test_a_cancelled_request_stops_fitting_before_any_decode(engine: Engine) -> None:
    cancel = threading.Event()
    cancel.set()
    result, _ = run(engine, cancel, messages=conversation(1001), max_tokens=4)
    assert result.stats.finish_reason == "cancelled"
    assert result.stats.prompt_tokens == 0  # no prompt was built, nothing prefilled


def test_cancel_is_polled_between_renders(engine: Engine) -> None:
    cancel = threading.Event()

    def render(messages: Sequence[Message]) -> tuple[str, list[int]]:  # the user cancels while the first render runs
        cancel.set()
        return engine.prompts.render(messages)

    fitter = PromptFitter(render, TokenCounts(engine.prompts.tokenize_text), N_CTX - 16, cancel)
    with pytest.raises(FitCancelled):
        fitter.fit(validate_messages(conversation(1001)))
    assert fitter.renders == 1


def test_fitting_past_its_time_budget_is_refused_in_one_line(engine: Engine) -> None:
    now = [0.0]

    def slow_count(text: str) -> list[int]:  # each message text takes 10 ms of the clock
        now[0] += 0.01
        return engine.prompts.tokenize_text(text)

    fitter = PromptFitter(
        engine.prompts.render, TokenCounts(slow_count), 10_000_000, budget_s=5.0, clock=lambda: now[0]
    )
    with pytest.raises(PromptFitTimeoutError) as caught:
        fitter.fit(validate_messages(conversation(1001)))
    assert isinstance(caught.value, EngineError)
    assert str(caught.value) == (
        "Fitting the conversation (1001 messages) into the context took over 5 s: send fewer or shorter messages"
    )
    assert now[0] < 5.0 + 256 * 0.01 + 0.01  # it stopped at the next poll after the deadline
