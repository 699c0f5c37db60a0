"""Requests take turns in the engine process, and a long one does not hold the others: an answer
asked for during a long embeddings request runs between two of its texts and ends first; the
embedding still comes whole and in order. The real engine process on the factory target."""

from __future__ import annotations

import threading
from typing import Any

from desktop_app.engine.api import GenerateRequest
from desktop_app.engine_process.client import EngineLost, EngineProcess
from desktop_app.engine_process.protocol import AutoPlan, Done, Embedded, EngineEvent, Load

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
