"""The context seen from the engine: prompt progress batch by batch, a stop while reading, the
prompt's size counted before sending, and the overflow policy."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from desktop_app.engine import ContextOverflowError, Engine, GenerateRequest, ModelOptions
from desktop_app.engine.api import FinishReason, ModelInfo, OverflowPolicy, SpecMode
from desktop_app.engine.context_size import kv_bytes_per_token, raise_offer
from desktop_app.engine.events import Finished, PromptProgress, TextChunk
from desktop_app.engine.llama.gguf_file import read_gguf
from tests.helpers import run, user
from tests.model_factory import N_EMBD, N_HEAD, N_HEAD_KV, TARGET_LAYERS

N_BATCH = 16
N_CTX = 512
LONG = "The quick brown fox jumps over the lazy dog near the river bank. " * 20  # ~280 tokens


@pytest.fixture(scope="module")
def engine(models) -> Iterator[Engine]:
    """The factory target with a small batch (many batches per prompt) and a small context."""
    engine = Engine()
    engine.load_target(models.target, ModelOptions(n_ctx=N_CTX, n_batch=N_BATCH, n_threads=1))
    yield engine
    engine.close()


def conversation(turns: int) -> list[dict[str, str]]:
    messages = []
    for i in range(turns):
        messages += [
            {"role": "user", "content": f"Question number {i} about something rather long and wordy."},
            {"role": "assistant", "content": f"Answer number {i}, which is fine and also says a few things."},
        ]
    return messages + user("And the last question?")


LONG_CHAT = conversation(20)  # ~800 tokens: over the context


def test_progress_arrives_after_each_batch_before_the_first_text(engine: Engine) -> None:
    engine.target.clear()  # nothing cached: the whole prompt is read
    events = list(engine.generate(GenerateRequest(messages=user(LONG), max_tokens=4, spec=SpecMode.OFF)))
    progress = [e for e in events if isinstance(e, PromptProgress)]
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextChunk))
    finished = events[-1]
    assert isinstance(finished, Finished)
    total = finished.stats.prompt_tokens
    assert total > 10 * N_BATCH
    assert all(isinstance(e, PromptProgress) for e in events[: len(progress)]) and len(progress) == first_text
    done = [p.done for p in progress]
    assert done[0] == 0 and done[-1] == total and all(p.total == total for p in progress)
    # one event per batch of N_BATCH tokens (the last prompt token is read with the first answer token)
    assert done[1:-1] == [min(n, total - 1) for n in range(N_BATCH, total - 1 + N_BATCH, N_BATCH)]


def test_the_cached_prefix_counts_as_read(engine: Engine) -> None:
    first, _ = run(engine, messages=user(LONG), max_tokens=4, spec=SpecMode.OFF)
    follow = user(LONG) + [{"role": "assistant", "content": first.text}] + user("Why?")
    events = list(engine.generate(GenerateRequest(messages=follow, max_tokens=4, spec=SpecMode.OFF)))
    progress = [e for e in events if isinstance(e, PromptProgress)]
    assert progress[0].done >= first.stats.prompt_tokens  # the first turn is in the cache already
    assert len(progress) <= 4


def test_stop_while_reading_the_prompt_ends_at_once(engine: Engine) -> None:
    engine.target.clear()
    cancel = threading.Event()
    request = GenerateRequest(messages=user(LONG + " Once more."), max_tokens=40, spec=SpecMode.OFF)
    seen: list[PromptProgress] = []
    finished = None
    for event in engine.generate(request, cancel):
        if isinstance(event, PromptProgress):
            seen.append(event)
            if len(seen) == 2:
                cancel.set()
        if isinstance(event, Finished):
            finished = event
    assert finished is not None and finished.stats.finish_reason is FinishReason.CANCELLED
    assert finished.stats.generated_tokens == 0 and finished.text == ""
    assert seen[-1].done == N_BATCH < seen[-1].total  # no batch read after the stop
    # the engine goes on: the next answer reads only what the stop left unread
    again, _ = run(engine, messages=user(LONG + " Once more."), max_tokens=4, spec=SpecMode.OFF)
    assert again.stats.prompt_tokens_new == again.stats.prompt_tokens - N_BATCH
    assert len(again.token_ids) == 4


def test_the_counted_size_is_the_prompt_the_answer_reads(engine: Engine) -> None:
    first, _ = run(engine, messages=user("Tell me about foxes."), max_tokens=12)
    messages = user("Tell me about foxes.") + [{"role": "assistant", "content": first.text}] + user("And dogs?")
    request = GenerateRequest(messages=messages, max_tokens=12)
    size = engine.count_prompt(request)
    answer, _ = run(engine, messages=messages, max_tokens=12)
    assert (size.tokens, size.dropped, size.n_ctx) == (answer.stats.prompt_tokens, 0, N_CTX)
    assert not size.over and size.limit == N_CTX - 12


def test_a_conversation_too_long_is_counted_as_the_model_would_see_it(engine: Engine) -> None:
    messages = LONG_CHAT
    size = engine.count_prompt(GenerateRequest(messages=messages, max_tokens=8))
    answer, _ = run(engine, messages=messages, max_tokens=8)
    assert size.over and size.dropped == answer.stats.dropped_turns > 0
    assert size.tokens == answer.stats.prompt_tokens <= size.limit


def test_the_refuse_policy_names_the_numbers_and_the_fix(engine: Engine) -> None:
    messages = LONG_CHAT
    request = GenerateRequest(messages=messages, max_tokens=8, overflow=OverflowPolicy.REFUSE)
    whole = len(engine.prompts.render(messages)[1])
    with pytest.raises(ContextOverflowError) as caught:
        run(engine, messages=messages, max_tokens=8, overflow="refuse")
    message = str(caught.value)
    assert f"{whole:,} tokens long but the context holds {N_CTX:,}" in message
    assert f"{N_CTX - 8:,} for the prompt" in message and "raise the context size" in message
    # a conversation that fits is answered under the same policy
    assert engine.count_prompt(request).over
    ok, _ = run(engine, messages=user("Short?"), max_tokens=4, overflow="refuse")
    assert len(ok.token_ids) == 4
    with pytest.raises(ValueError, match="overflow must be one of drop_oldest, refuse"):
        GenerateRequest(messages=messages, overflow="truncate")  # type: ignore[arg-type]


def test_a_context_token_costs_the_kv_cache_of_every_layer(models) -> None:
    info = read_gguf(models.target)
    per_token = TARGET_LAYERS * N_HEAD_KV * 2 * (N_EMBD // N_HEAD) * 2  # layers x kv heads x (k + v) x f16
    assert kv_bytes_per_token(info.metadata, info.architecture) == per_token
    engine = Engine()
    try:
        loaded = engine.load_target(models.target, ModelOptions(n_ctx=256, n_threads=1))
    finally:
        engine.close()
    assert (loaded.n_ctx, loaded.n_ctx_train, loaded.kv_bytes_per_token) == (256, 4096, per_token)


def test_a_larger_context_is_offered_only_when_it_fits_in_memory() -> None:
    model = ModelInfo("m.gguf", "m", "llama", 1, "F16", 1, 4096, 0, n_ctx_train=32768, kv_bytes_per_token=100_000)
    plenty = raise_offer(model, available=2**40)
    assert plenty is not None and plenty.n_ctx == 32768 and plenty.extra_bytes == (32768 - 4096) * 100_000
    assert "32,768 tokens" in plenty.explanation and "available now" in plenty.explanation
    tight = raise_offer(model, available=2 * 10**9)  # 2.8 GB for 32k would not fit; 16k (1.2 GB) does
    assert tight is not None and tight.n_ctx == 16384
    assert raise_offer(model, available=10**8) is None  # not even 8k
    trained_for_less = ModelInfo("m.gguf", "m", "llama", 1, "F16", 1, 4096, 0, n_ctx_train=4096, kv_bytes_per_token=1)
    assert raise_offer(trained_for_less, available=2**40) is None
