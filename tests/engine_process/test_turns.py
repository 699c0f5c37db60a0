"""Requests take turns in the engine process, and a long one does not hold the others: an answer
asked for during a long embeddings request runs between two of its texts and ends first (the
embedding still comes whole and in order); a chat sent while a long prompt is read runs between
two of its batches, and the long answer is the one it gives uninterrupted. The real engine
process, on the factory target and the built-in model."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from desktop_app.engine.api import GenerateRequest, SamplingParams
from desktop_app.engine_process.client import EngineLost, EngineProcess
from desktop_app.engine_process.protocol import AutoPlan, Done, Embedded, EngineEvent, Load, Pieces, PromptRead

GREEDY = SamplingParams(temperature=0.0)
WORDS = ["cat", "dog", "heron", "miller", "child", "fox", "ferryman", "otter"]
TEXTS = [" ".join(f"word{i}x{j}" for j in range(40)) for i in range(60)]  # about 13,000 tokens, under the cap


def test_an_answer_asked_during_a_long_embedding_ends_first(models: Any) -> None:
    engine = EngineProcess()
    try:
        engine.load_and_wait(Load(str(models.target), plan=AutoPlan(measure=False)), timeout=300)
        order: list[str] = []
        ended = threading.Event()
        vectors: list[Embedded] = []

        def embedded(event: EngineEvent | EngineLost) -> None:
            assert isinstance(event, Embedded), event
            vectors.append(event)
            order.append("embedding")
            ended.set()

        def answered(event: EngineEvent | EngineLost) -> None:
            assert not isinstance(event, EngineLost), event
            if isinstance(event, Done):
                order.append("answer")

        engine.embed(TEXTS, embedded)
        engine.generate(GenerateRequest(messages=[{"role": "user", "content": "Hi"}], max_tokens=4), answered)
        assert ended.wait(300)
        assert order == ["answer", "embedding"]
        (result,) = vectors
        assert result.result is not None and len(result.result.vectors) == len(TEXTS)
        alone: list[Embedded] = []
        again = threading.Event()
        engine.embed(TEXTS[:3], lambda e: (alone.append(e), again.set()))  # type: ignore[arg-type, func-returns-value]
        assert again.wait(120) and alone[0].result is not None
        assert alone[0].result.vectors == result.result.vectors[:3]  # the same vectors, in order
    finally:
        engine.shutdown()


def _answer(
    engine: EngineProcess, request: GenerateRequest, log: list[str], name: str
) -> tuple[threading.Event, list[str]]:
    """Send ``request``; log its first text and its end under ``name``; the text comes in the list."""
    ended, text = threading.Event(), [""]

    def sink(event: EngineEvent | EngineLost) -> None:
        assert not isinstance(event, EngineLost), event
        if isinstance(event, Pieces):
            if not text[0]:
                log.append(f"{name} text")
            text[0] += "".join(t for t, _ in event.pieces)
        elif isinstance(event, PromptRead) and event.progress.done < event.progress.total:
            log.append(f"{name} reading")
        elif isinstance(event, Done):
            log.append(f"{name} done")
            ended.set()

    engine.generate(request, sink)
    return ended, text


def test_a_chat_sent_while_a_long_prompt_is_read_goes_first_and_the_long_answer_is_unchanged(
    default_model: Path,
) -> None:
    document = " ".join(f"Line {i}: the {WORDS[i % len(WORDS)]} sat by the river." for i in range(220))
    long = GenerateRequest(
        messages=[{"role": "user", "content": f"{document}\nSummarize this."}], max_tokens=12, sampling=GREEDY
    )
    chat = GenerateRequest(messages=[{"role": "user", "content": "Say hello."}], max_tokens=4, sampling=GREEDY)
    load = Load(str(default_model), plan=AutoPlan(measure=False))
    engine = EngineProcess()
    try:
        engine.load_and_wait(load, timeout=300)
        log: list[str] = []
        long_ended, long_text = _answer(engine, long, log, "long")
        deadline = time.monotonic() + 120
        while "long reading" not in log and time.monotonic() < deadline:
            time.sleep(0.01)
        chat_ended, _ = _answer(engine, chat, log, "chat")
        assert chat_ended.wait(300) and long_ended.wait(300)
        assert log.index("chat done") < log.index("long text"), log  # the chat did not wait for the long read
    finally:
        engine.shutdown()
    alone = EngineProcess()  # the long answer from a fresh engine, read without a pause
    try:
        alone.load_and_wait(load, timeout=300)
        ended, text = _answer(alone, long, [], "long")
        assert ended.wait(300)
    finally:
        alone.shutdown()
    assert long_text[0] == text[0] and text[0]
