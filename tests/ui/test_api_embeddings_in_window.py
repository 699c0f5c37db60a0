"""``/v1/embeddings`` from the window's "Serve API": the window's engine process embeds with the
model the window loaded, in turn with the chat's answers, and says why when it cannot."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2 as httpx
import numpy as np
import openai

from desktop_app.engine.llama.embeddings import MAX_REQUEST_TOKENS
from desktop_app.server.backend import MAX_WAITING
from tests.model_factory import N_EMBD
from tests.server.live_server import free_port
from tests.ui.conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS
from tests.ui.helpers import next_answer, type_and_send

TEXTS = ["The cat sat on the mat.", "Interest rates rose in March.", "The cat sat on the mat."]


def _in_background(qtbot: Any, call: Callable[[], Any]) -> Any:
    """``call``'s result (or exception), run on a thread while the GUI thread goes on serving
    events: the window's API hands every request to the GUI thread."""
    results: list[Any] = []

    def run() -> None:
        try:
            results.append(call())
        except Exception as exc:  # noqa: BLE001 - returned to the test, which asserts on it
            results.append(exc)

    threading.Thread(target=run, daemon=True).start()
    qtbot.waitUntil(lambda: bool(results), timeout=ANSWER_TIMEOUT_MS)
    return results[0]


def _vectors(url: str, texts: list[str]) -> list[list[float]]:
    """The vectors the official ``openai`` client reads (it asks for base64 by default), in order."""
    client = openai.OpenAI(base_url=url, api_key="none", max_retries=0, timeout=120)
    answer = client.embeddings.create(model="x", input=texts)
    assert [d.index for d in answer.data] == list(range(len(texts)))
    return [d.embedding for d in answer.data]


def _post(port: int, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"http://127.0.0.1:{port}/v1/embeddings", json=body, timeout=120)


@contextmanager
def _specchat_serve(model: Path) -> Iterator[str]:
    """``specchat serve`` on ``model`` in its own process, as a user starts it; its API's URL."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "SPECCHAT_API_KEY"}
    command = [sys.executable, "-m", "desktop_app", "serve", "--target", str(model), "--port", str(port)]
    server = subprocess.Popen([*command, "--threads", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + LOAD_TIMEOUT_MS / 1000
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, server.stderr and server.stderr.read()
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_windows_api_embeds_with_the_loaded_model_as_specchat_serve_does(
    qtbot: Any, make_window: Any, models: Any
) -> None:
    port = free_port()
    window = make_window(target_path=models.target, api_port=port)
    window.serve_action.trigger()
    url = f"http://127.0.0.1:{port}/v1"
    vectors = _in_background(qtbot, lambda: _vectors(url, TEXTS))
    assert not isinstance(vectors, Exception), vectors
    assert [len(v) for v in vectors] == [N_EMBD] * 3  # the factory target's width
    assert vectors[0] == vectors[2] and vectors[0] != vectors[1]  # the same text, the same vector
    again = _in_background(qtbot, lambda: _vectors(url, TEXTS[:1]))
    assert again == vectors[:1]  # and again in the next request
    assert all(abs(float(np.linalg.norm(v)) - 1.0) < 1e-4 for v in vectors)
    qtbot.waitUntil(lambda: window.status.api.text().endswith("· 2 requests"), timeout=5000)
    with _specchat_serve(models.target) as served:
        reference = _vectors(served, TEXTS)
    assert np.allclose(vectors, reference, atol=1e-5), np.abs(np.subtract(vectors, reference)).max()
    assert window.chat_view.messages == []  # API requests never touch the conversation


def test_an_embedding_waits_for_the_chats_answer_and_a_full_queue_is_busy(
    qtbot: Any, make_window: Any, models: Any
) -> None:
    port = free_port()
    window = make_window(target_path=models.target, api_port=port, max_tokens=4000)
    window.serve_action.trigger()
    embedded: list[httpx.Response] = []
    answered: list[httpx.Response] = []
    chat_body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}

    def later(results: list[httpx.Response], call: Callable[[], httpx.Response]) -> None:
        threading.Thread(target=lambda: results.append(call()), daemon=True).start()

    with next_answer(qtbot, window.client) as chat:
        type_and_send(qtbot, window, "Write a very long story about a lighthouse keeper.")
        qtbot.waitUntil(lambda: len(chat.pieces) > 2, timeout=ANSWER_TIMEOUT_MS)
        later(embedded, lambda: _post(port, {"input": TEXTS[0]}))
        chat_url = f"http://127.0.0.1:{port}/v1/chat/completions"
        for _ in range(MAX_WAITING):  # API answers queued behind it: with the embedding, the queue is full
            later(answered, lambda: httpx.post(chat_url, json=chat_body, timeout=ANSWER_TIMEOUT_MS / 1000))
        qtbot.waitUntil(lambda: window.api.backend.waiting() == MAX_WAITING, timeout=10_000)
        busy = _in_background(qtbot, lambda: _post(port, {"input": TEXTS[1]}))
        assert busy.status_code == 503 and busy.headers["Retry-After"] == "2", busy.text
        assert busy.json()["error"]["code"] == "busy" and "busy" in busy.json()["error"]["message"]
        assert not embedded and chat.done is None  # the embedding waits behind the chat's answer
        window.stop_button.click()
    qtbot.waitUntil(lambda: len(embedded) == 1 and len(answered) == MAX_WAITING, timeout=ANSWER_TIMEOUT_MS)
    assert embedded[0].status_code == 200 and len(embedded[0].json()["data"][0]["embedding"]) == N_EMBD
    assert [r.status_code for r in answered] == [200] * MAX_WAITING


def test_embedding_errors_in_the_window_say_why(qtbot: Any, make_window: Any, models: Any) -> None:
    port = free_port()
    window = make_window(target_path=models.target, api_port=port, max_tokens=3000)
    window.serve_action.trigger()
    too_long = _in_background(qtbot, lambda: _post(port, {"input": ["hi", "word " * 3000]}))
    assert too_long.status_code == 400 and "input 1 is" in too_long.json()["error"]["message"], too_long.text
    assert "an embedding takes at most" in too_long.json()["error"]["message"]
    # an embedding queued behind the chat's answer when the engine dies hears why
    pid = window.client.pid
    with next_answer(qtbot, window.client) as chat:
        type_and_send(qtbot, window, "Write a very long story about a lighthouse keeper.")
        qtbot.waitUntil(lambda: len(chat.pieces) > 2, timeout=ANSWER_TIMEOUT_MS)
        lost: list[httpx.Response] = []
        threading.Thread(target=lambda: lost.append(_post(port, {"input": TEXTS[0]})), daemon=True).start()
        qtbot.waitUntil(lambda: len(window.api.backend._waits) == 1, timeout=10_000)
        qtbot.wait(300)  # the command is down the pipe, behind the answer
        with qtbot.waitSignal(window.client.engine_crashed, timeout=30_000):
            os.kill(pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: bool(lost), timeout=10_000)
    assert lost[0].status_code == 503 and "The engine was killed" in lost[0].json()["error"]["message"], lost[0].text
    # while the engine is down, a request is told so at once
    down = _in_background(qtbot, lambda: _post(port, {"input": TEXTS[0]}))
    assert down.status_code == 503 and "engine is not running" in down.json()["error"]["message"], down.text


def test_an_embedding_with_no_model_loaded_is_a_503_that_says_so(qtbot: Any, make_window: Any, models: Any) -> None:
    port = free_port()
    bad = str(models.not_gguf)
    window = make_window(wait_loaded=False, target_path=bad, recent_files=[bad], api_port=port)
    with qtbot.waitSignal(window.client.load_failed, timeout=LOAD_TIMEOUT_MS):
        pass
    window.serve_action.trigger()
    assert window.api.running
    answer = _in_background(qtbot, lambda: _post(port, {"input": TEXTS[0]}))
    assert answer.status_code == 503 and answer.json()["error"]["message"] == "no model is loaded"


def test_embeddings_over_the_token_limit_or_left_by_their_client_stop_in_the_window(
    qtbot: Any, make_window: Any, models: Any
) -> None:
    port = free_port()
    window = make_window(target_path=models.target, api_port=port, max_tokens=3000)
    window.serve_action.trigger()
    texts = [" ".join(f"word{i}x{j}" for j in range(60)) for i in range(2048)]  # about 900,000 tokens
    over = _in_background(qtbot, lambda: _post(port, {"input": texts}))
    assert over.status_code == 400 and f"{MAX_REQUEST_TOKENS:,}" in over.json()["error"]["message"], over.text
    with next_answer(qtbot, window.client) as chat:
        type_and_send(qtbot, window, "Write a very long story about a lighthouse keeper.")
        qtbot.waitUntil(lambda: len(chat.pieces) > 2, timeout=ANSWER_TIMEOUT_MS)
        url = f"http://127.0.0.1:{port}/v1/embeddings"
        left = _in_background(qtbot, lambda: httpx.post(url, json={"input": TEXTS}, timeout=1.0))
        assert isinstance(left, httpx.TimeoutException), left  # it waited behind the answer; its client left
        qtbot.waitUntil(lambda: not window.api.backend._waits, timeout=10_000)  # the Cancel went to the engine
        window.stop_button.click()
    after = _in_background(qtbot, lambda: _post(port, {"input": TEXTS[0]}))
    assert after.status_code == 200, after.text
