"""What one ``/v1/embeddings`` request may cost, through the real server and engine (the embedded
model): texts over the per-request token limit are refused at once, by name, before any is
computed (2,048 texts of 60 words once kept the engine busy for over ten minutes), and a client
that goes away stops its work at the next text, so the next client is answered at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import psutil
import pytest

from desktop_app.engine.llama.embeddings import MAX_REQUEST_TOKENS
from tests.server.conftest import serving
from tests.server.live_server import Server


@pytest.fixture(scope="module")
def server(default_model: Path) -> Iterator[Server]:
    with serving(default_model) as served:
        yield served


def words(i: int, n: int) -> str:
    return " ".join(f"word{i}x{j}" for j in range(n))  # 60 of them: about 290 tokens


def test_texts_over_the_token_limit_are_refused_at_once_by_name(server: Server) -> None:
    texts = [words(i, 60) for i in range(2048)]  # about 900,000 tokens: the reported request
    rss = psutil.Process().memory_info().rss
    answers: list[httpx.Response] = []
    started = time.perf_counter()
    thread = threading.Thread(
        target=lambda: answers.append(httpx.post(f"{server.url}/embeddings", json={"input": texts}, timeout=60))
    )
    thread.start()
    other = httpx.get(f"{server.url}/models", timeout=60)  # another client, meanwhile
    thread.join(timeout=60)
    elapsed = time.perf_counter() - started
    assert other.status_code == 200
    assert answers and answers[0].status_code == 400, answers
    message = answers[0].json()["error"]["message"]
    assert f"{MAX_REQUEST_TOKENS:,}" in message and "\n" not in message, message
    assert elapsed < 5.0, f"the refusal took {elapsed:.1f} s"
    assert psutil.Process().memory_info().rss - rss < 200 * 2**20


def test_a_request_under_the_limit_is_answered(server: Server) -> None:
    answer = httpx.post(f"{server.url}/embeddings", json={"input": [words(i, 10) for i in range(4)]}, timeout=60)
    assert answer.status_code == 200, answer.text
    assert len(answer.json()["data"]) == 4


def test_a_client_that_leaves_stops_its_embeddings(server: Server) -> None:
    texts = [words(i, 12) for i in range(MAX_REQUEST_TOKENS // 100)]  # 60-70 tokens each: under the limit
    started = time.perf_counter()
    with pytest.raises(httpx.TimeoutException):
        httpx.post(f"{server.url}/embeddings", json={"input": texts}, timeout=1.0)
    left = time.perf_counter()
    chat = httpx.post(
        f"{server.url}/chat/completions",
        json={"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2, "temperature": 0},
        timeout=120,
    )
    waited = time.perf_counter() - left
    assert chat.status_code == 200, chat.text
    # The whole request takes tens of seconds on a laptop's CPU; the next client waits for one text.
    assert waited < 5.0, f"the next client waited {waited:.1f} s after the first left ({left - started:.1f} s in)"
