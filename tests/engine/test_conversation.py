"""Multi-turn cache reuse, cancel, stop conditions and a full context."""

from __future__ import annotations

import threading

import pytest

from desktop_app.engine import ContextOverflowError, Engine, GenerateRequest, ModelOptions
from desktop_app.engine.api import FinishReason, SpecMode
from desktop_app.engine.events import Finished, TextChunk, final_result
from tests.helpers import run, user

HANG_GUARD_S = 60  # only a hung engine takes this long; the test passes or fails on what it sees


def test_second_turn_prefills_only_the_new_tokens(pair_engine: Engine) -> None:
    first, _ = run(pair_engine, messages=user("Tell me a story about a robot."), max_tokens=24, spec="on")
    assert first.stats.prompt_tokens_new >= first.stats.prompt_tokens - 1
    follow_up = "And then what happened?"
    messages = user("Tell me a story about a robot.") + [
        {"role": "assistant", "content": first.text},
        {"role": "user", "content": follow_up},
    ]
    second, _ = run(pair_engine, messages=messages, max_tokens=24, spec="on")
    assert pair_engine.target is not None
    new_turn = len(pair_engine.target.tokenize(follow_up, add_special=False)) + 12  # + template markers
    assert second.stats.prompt_tokens > first.stats.prompt_tokens + 24
    assert second.stats.prompt_tokens_new <= new_turn, second.stats.to_dict()


def test_cancel_stops_within_one_cycle(pair_engine: Engine) -> None:
    cancel = threading.Event()
    request = GenerateRequest(
        messages=user("Write a long essay."), max_tokens=400, spec="on", draft_max=4, drafter="model"
    )
    passes_when_cancelled = None
    result = None
    for event in pair_engine.generate(request, cancel):
        if type(event).__name__ == "TextChunk" and not cancel.is_set():
            cancel.set()
        if type(event).__name__ == "StatsUpdate" and passes_when_cancelled is None and cancel.is_set():
            passes_when_cancelled = event.stats.target_passes
        if type(event).__name__ == "Finished":
            result = event
    assert result is not None
    assert result.stats.finish_reason is FinishReason.CANCELLED
    assert result.stats.target_passes == 1  # the cycle in flight finishes, no new one starts
    assert 1 <= result.stats.generated_tokens <= 5


def test_cancel_from_another_thread(default_engine: Engine) -> None:
    cancel = threading.Event()
    streaming = threading.Event()
    box: dict[str, Finished] = {}
    request = GenerateRequest(messages=user("Count to one thousand."), max_tokens=2000, spec=SpecMode.OFF)

    def on_text(chunk: TextChunk) -> None:
        # The answer is streaming: let this thread cancel it, and hold the engine until it has,
        # so the cancel lands mid-answer however busy the machine is.
        streaming.set()
        cancel.wait(HANG_GUARD_S)

    def worker() -> None:
        box["result"] = final_result(default_engine.generate(request, cancel), on_text)

    thread = threading.Thread(target=worker)
    thread.start()
    assert streaming.wait(HANG_GUARD_S), "no text arrived"
    cancel.set()
    thread.join(HANG_GUARD_S)
    assert not thread.is_alive(), "the engine did not stop"
    result = box["result"]
    assert result.stats.finish_reason is FinishReason.CANCELLED
    # It stopped at the cycle the cancel found (plain decoding: one token a cycle), not at max_tokens.
    assert 1 <= result.stats.generated_tokens <= 4, result.stats.generated_tokens


def test_stop_string_ends_the_answer_and_is_not_shown(pair_engine: Engine) -> None:
    full, _ = run(pair_engine, messages=user("Hello"), max_tokens=30, spec="off")
    stop = full.text[10:14]
    assert stop.strip()
    cut, _ = run(pair_engine, messages=user("Hello"), max_tokens=30, spec="on", stop=[stop])
    assert cut.stats.finish_reason is FinishReason.STOP
    assert cut.text == full.text[: full.text.index(stop)]


def test_max_tokens_is_exact_with_speculation(pair_engine: Engine) -> None:
    for n in (1, 2, 5, 13):
        result, _ = run(pair_engine, messages=user("Hello"), max_tokens=n, spec="on", draft_max=4)
        assert len(result.token_ids) == n
        assert result.stats.finish_reason is FinishReason.LENGTH


def test_the_default_model_stops_at_end_of_turn(default_engine: Engine) -> None:
    result, _ = run(default_engine, messages=user("Say just the word yes."), max_tokens=64, spec="on", drafter="ngram")
    assert result.stats.finish_reason is FinishReason.STOP
    assert "<|im_end|>" not in result.text


@pytest.fixture(scope="module")
def small_context_engine(models) -> Engine:
    engine = Engine()
    engine.load_target(models.target, ModelOptions(n_ctx=160))
    engine.load_draft(models.draft, ModelOptions(n_ctx=160))
    return engine


def test_long_conversation_drops_oldest_turns(small_context_engine: Engine) -> None:
    messages = [{"role": "system", "content": "Be brief."}]
    for i in range(30):
        messages += [
            {"role": "user", "content": f"Question number {i} about something."},
            {"role": "assistant", "content": f"Answer number {i}, which is fine."},
        ]
    messages += user("Last question?")
    result, _ = run(small_context_engine, messages=messages, max_tokens=8, spec="on")
    assert result.stats.dropped_turns > 0
    assert result.stats.prompt_tokens <= small_context_engine.target.n_ctx - 8
    assert len(result.token_ids) == 8


def test_a_message_longer_than_the_context_is_refused_clearly(small_context_engine: Engine) -> None:
    n_ctx = small_context_engine.target.n_ctx
    with pytest.raises(ContextOverflowError, match=f"context holds {n_ctx}") as refused:
        run(small_context_engine, messages=user("word " * (n_ctx + 50)), max_tokens=8)
    assert "Preferences → Model → Context length" in str(refused.value)  # where the window raises it
    ok, _ = run(small_context_engine, messages=user("Still there?"), max_tokens=4)  # engine still usable
    assert len(ok.token_ids) == 4


def test_generation_that_fills_the_context_ends_cleanly(small_context_engine: Engine) -> None:
    result, _ = run(small_context_engine, messages=user("Go on and on."), max_tokens=1000, spec="on")
    assert result.stats.finish_reason is FinishReason.CONTEXT_FULL
    assert result.stats.prompt_tokens + result.stats.generated_tokens <= small_context_engine.target.n_ctx + 1


def test_auto_costs_measured_after_load_keep_the_conversation_cache(pair_engine: Engine) -> None:
    first, _ = run(pair_engine, messages=user("Tell me a story."), max_tokens=8, spec="off")
    costs = pair_engine.prepare_auto("model")
    assert costs is not None and len(costs.target_batch_s) == 9
    assert costs.target_batch_s == sorted(costs.target_batch_s)
    again, _ = run(pair_engine, messages=user("Tell me a story."), max_tokens=8, spec="auto", drafter="model")
    assert again.stats.prompt_tokens_new <= 2  # the cache survived the measurement
    assert again.token_ids == first.token_ids


def test_cost_measurement_gives_way_when_asked(models) -> None:
    engine = Engine()
    engine.load_target(models.target)
    calls = []
    assert engine.prepare_auto("ngram", should_stop=lambda: calls.append(1) or len(calls) > 3) is None
    assert len(calls) == 4  # stopped at the first poll that said so
    assert engine.prepare_auto("ngram") is not None  # and measures fully when left alone
