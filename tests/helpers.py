"""Small helpers shared by tests."""

from __future__ import annotations

import threading
from typing import Any

from desktop_app.engine import Engine
from desktop_app.engine.api import Finished, GenerateRequest, TextChunk, final_result


def run(engine: Engine, cancel: threading.Event | None = None, **kwargs: Any) -> tuple[Finished, list[TextChunk]]:
    """Generate to the end; return the Finished event and the text chunks seen."""
    if "messages" not in kwargs and "prompt" not in kwargs:
        kwargs["messages"] = [{"role": "user", "content": "Hello"}]
    chunks: list[TextChunk] = []
    return final_result(engine.generate(GenerateRequest(**kwargs), cancel), chunks.append), chunks


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]
