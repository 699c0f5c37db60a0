"""A request of a thousand short turns, through the real API at a small context: it is fitted
(oldest turns dropped) or refused within two seconds, and another client is served meanwhile.
Dropping turns once re-rendered the whole conversation per dropped turn (48 s for this request,
every other client blocked)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import pytest

from desktop_app.engine.api import ModelOptions
from tests.server.conftest import serving
from tests.server.live_server import Server

TURNS = 1001
SMALL_CTX = 256


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.target, ModelOptions(n_ctx=SMALL_CTX)) as served:
        yield served


def long_conversation() -> list[dict[str, str]]:
    messages = [{"role": "system", "content": "Answer briefly."}]
    for i in range(TURNS - 1):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}: a short line"})
    messages.append({"role": "user", "content": "And now?"})
    return messages


def test_a_thousand_turns_are_fitted_quickly_while_another_client_is_served(server: Server) -> None:
    body = {"messages": long_conversation(), "max_tokens": 4, "temperature": 0}
    results: dict[str, Any] = {}

    def long_request() -> None:
        started = time.perf_counter()
        results["long"] = httpx.post(f"{server.url}/chat/completions", json=body, timeout=60)
        results["long_s"] = time.perf_counter() - started

    thread = threading.Thread(target=long_request)
    thread.start()
    started = time.perf_counter()
    other = httpx.post(
        f"{server.url}/chat/completions",
        timeout=60,
        json={"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "temperature": 0},
    )
    other_s = time.perf_counter() - started
    thread.join(timeout=60)

    long = results["long"]
    assert long.status_code == 200, long.text
    assert long.json()["choices"][0]["message"]["content"] is not None
    assert long.json()["usage"]["prompt_tokens"] <= SMALL_CTX  # the oldest turns were dropped to fit
    assert results["long_s"] < 2.0, f"the 1001-turn request took {results['long_s']:.1f} s"
    assert other.status_code == 200 and other_s < 2.0 + results["long_s"], f"the other client waited {other_s:.1f} s"


HUNDRED_K = 100_001


def _short_turns(n: int) -> list[dict[str, str]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"t{i}"} for i in range(n)]


@pytest.mark.parametrize(
    ("endpoint", "body"),
    [
        ("messages", {"model": "m", "max_tokens": 4, "messages": _short_turns(HUNDRED_K)}),
        ("responses", {"model": "m", "max_output_tokens": 4, "input": _short_turns(HUNDRED_K)}),
    ],
)
def test_a_hundred_thousand_turns_are_answered_in_seconds_while_another_client_is_served(
    server: Server, endpoint: str, body: dict[str, Any]
) -> None:
    """Parsing, checking and fitting are linear in the messages: 100,001 turns (3.5 MB) cost a few
    seconds, and the prompt kept is the context's worth, as for any long prompt."""
    results: dict[str, Any] = {}

    def long_request() -> None:
        started = time.perf_counter()
        results["long"] = httpx.post(f"{server.url}/{endpoint}", json={**body, "temperature": 0}, timeout=120)
        results["long_s"] = time.perf_counter() - started

    thread = threading.Thread(target=long_request)
    thread.start()
    time.sleep(0.2)  # the long body is on its way
    started = time.perf_counter()
    other = httpx.post(
        f"{server.url}/chat/completions",
        timeout=120,
        json={"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "temperature": 0},
    )
    other_s = time.perf_counter() - started
    thread.join(timeout=120)
    long = results["long"]
    assert long.status_code == 200, long.text[:300]
    assert results["long_s"] < 5.0, f"the {HUNDRED_K:,}-turn request took {results['long_s']:.1f} s"
    assert other.status_code == 200 and other_s < 5.0, f"the other client waited {other_s:.1f} s"
