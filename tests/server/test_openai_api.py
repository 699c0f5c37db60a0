"""The local OpenAI-compatible API, driven by the official ``openai`` client and by raw HTTP
against a real uvicorn server and the real engine on the factory target."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import openai
import pytest

from desktop_app.engine import Engine
from desktop_app.engine.api import GenerateRequest, SamplingParams
from desktop_app.engine.events import TextChunk
from desktop_app.engine_process.protocol import AutoPlan, Load
from desktop_app.server.engine_backend import EngineBackend
from desktop_app.server.run import exposure_warning
from tests.server.live_server import Server, engine_backend

KEY = "test-key-123"
PROMPTS = [
    "Tell me a story about a robot.",
    "What is the capital of France?",
    "List three colours.",
    "Write a haiku about rain.",
    "Explain gravity briefly.",
    "Name a fruit.",
    "Count to five.",
    "Say hello.",
]


@pytest.fixture(scope="module")
def server(backend: EngineBackend) -> Iterator[Server]:
    server = Server(backend, KEY)
    yield server
    server.stop()


@pytest.fixture()
def client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key=KEY, max_retries=0, timeout=120)


def _cli_text(models: Any, prompt: str, max_tokens: int, *extra: str) -> str:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "desktop_app",
            "generate",
            "--target",
            str(models.target),
            "--prompt",
            prompt,
            "--max-tokens",
            str(max_tokens),
            "--spec",
            "off",
            "--json",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr
    return str(json.loads(out.stdout)["text"])


def test_chat_completions_match_specchat_generate_streamed_and_not(client: openai.OpenAI, models: Any) -> None:
    expected = _cli_text(models, PROMPTS[0], 24)
    reply = client.chat.completions.create(
        model="x",
        messages=[{"role": "user", "content": PROMPTS[0]}],
        temperature=0,
        max_tokens=24,
        extra_body={"speculation": "on"},
    )
    assert reply.choices[0].message.content == expected
    assert reply.choices[0].finish_reason == "length"
    assert reply.usage is not None and reply.usage.completion_tokens == 24 and reply.usage.prompt_tokens > 10
    timings = reply.model_extra["timings"]  # type: ignore[index]
    assert timings["speculation"]["mode"] == "on" and timings["predicted_n"] == 24
    assert {"drafter", "drafted", "accepted", "tokens_per_s"} <= set(timings["speculation"])
    stream = client.chat.completions.create(
        model="x",
        messages=[{"role": "user", "content": PROMPTS[0]}],
        temperature=0,
        max_tokens=24,
        stream=True,
        stream_options={"include_usage": True},
    )
    pieces, last = [], None
    for part in stream:
        if part.choices and part.choices[0].delta.content:
            pieces.append(part.choices[0].delta.content)
        last = part
    # Streamed text goes out at most ~30 times a second (app.FLUSH_S), so how many pieces a
    # toy model's 24 tokens (a few ms) arrive in is timing: asserting more than one failed on a
    # fast machine. The pieces make up the same answer.
    assert "".join(pieces) == expected and pieces
    assert last is not None and last.usage is not None and last.usage.completion_tokens == 24
    assert last.model_extra["timings"]["speculation"]["mode"] == "auto"  # type: ignore[index]


def test_a_seed_gives_one_text_with_speculation_off_on_and_auto_as_in_the_cli(
    client: openai.OpenAI, models: Any
) -> None:
    def answer(seed: int, spec: str) -> str | None:
        reply = client.chat.completions.create(
            model="x",
            messages=[{"role": "user", "content": PROMPTS[2]}],
            temperature=0.8,
            seed=seed,
            max_tokens=24,
            extra_body={"speculation": spec},
        )
        return reply.choices[0].message.content

    texts = {spec: answer(7, spec) for spec in ("off", "on", "auto")}
    assert (
        texts["off"]
        == texts["on"]
        == texts["auto"]
        == _cli_text(models, PROMPTS[2], 24, "--seed", "7", "--temperature", "0.8")
    )
    assert answer(8, "off") != texts["off"]


def test_completions_and_models(client: openai.OpenAI, models: Any) -> None:
    listed = client.models.list()
    assert [m.id for m in listed.data] == ["target"]
    done = client.completions.create(model="target", prompt="Once upon a time", max_tokens=12, temperature=0)
    assert done.choices[0].text and done.usage is not None and done.usage.completion_tokens == 12


def test_the_api_key_is_required(server: Server) -> None:
    assert httpx.get(f"{server.url}/models").status_code == 401
    wrong = httpx.get(f"{server.url}/models", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_api_key"
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=server.url, api_key="bad", max_retries=0).models.list()


@pytest.mark.parametrize(
    "body,status,words",
    [
        (b"{not json", 400, "not valid JSON"),
        ({"messages": [{"role": "user", "content": "hi"}], "temperature": "hot"}, 400, "temperature: must be a number"),
        ({"messages": [{"role": "user", "content": "hi"}], "colour": "blue"}, 400, "unknown field 'colour'"),
        ({"messages": [{"role": "user", "content": "hi"}], "n": 2}, 400, "'n' is not supported (only 1)"),
        ({"messages": "hi"}, 400, "'messages' must be a non-empty list"),
        (
            {"messages": [{"role": "user", "content": "hi"}], "temperature": 7},
            400,
            "temperature must be between 0.0 and 5.0",
        ),
        ({"messages": [{"role": "user", "content": "word " * 6000}]}, 400, "context holds"),
    ],
)
def test_bad_requests_get_openai_errors(server: Server, body: Any, status: int, words: str) -> None:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    reply = httpx.post(
        f"{server.url}/chat/completions",
        content=content,
        timeout=60,
        headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
    )
    assert reply.status_code == status, reply.text
    err = reply.json()["error"]
    assert words in err["message"] and err["type"] == "invalid_request_error"


def test_nan_is_refused_like_everywhere_else(server: Server) -> None:
    reply = httpx.post(
        f"{server.url}/chat/completions",
        headers={"Authorization": f"Bearer {KEY}"},
        content=b'{"messages": [{"role": "user", "content": "hi"}], "temperature": NaN}',
    )
    assert reply.status_code == 400 and "temperature must be a finite number" in reply.json()["error"]["message"]


def test_a_client_that_disconnects_mid_stream_cancels_its_generation(server: Server, engine: Engine) -> None:
    body = {
        "messages": [{"role": "user", "content": "Write a very long story."}],
        "max_tokens": 3000,
        "stream": True,
        "temperature": 0,
    }
    with httpx.stream(
        "POST", f"{server.url}/chat/completions", json=body, timeout=60, headers={"Authorization": f"Bearer {KEY}"}
    ) as reply:
        lines = reply.iter_lines()
        assert next(line for line in lines if line.startswith("data: "))
    gone = time.perf_counter()
    assert engine._lock.acquire(timeout=1.0), "the engine was still generating 1 s after the client left"
    engine._lock.release()
    assert time.perf_counter() - gone < 1.0


def test_eight_clients_at_once_all_get_complete_correct_answers(client: openai.OpenAI, engine: Engine) -> None:
    expected = {}
    for prompt in PROMPTS:  # sequential references through the API
        reply = client.chat.completions.create(
            model="x", messages=[{"role": "user", "content": prompt}], temperature=0, max_tokens=16
        )
        expected[prompt] = reply.choices[0].message.content
    results: dict[str, str | None] = {}

    def ask(prompt: str) -> None:
        reply = client.chat.completions.create(
            model="x", messages=[{"role": "user", "content": prompt}], temperature=0, max_tokens=16
        )
        results[prompt] = reply.choices[0].message.content

    threads = [threading.Thread(target=ask, args=(p,)) for p in PROMPTS]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=180)
    assert results == expected


@pytest.fixture()
def one_may_wait(models: Any) -> Iterator[tuple[Server, EngineBackend]]:
    """A server whose backend queues at most one request behind the running one."""
    with engine_backend(Load(str(models.target), plan=AutoPlan(measure=False)), max_waiting=1) as backend:
        server = Server(backend, KEY)
        yield server, backend
        server.stop()


def test_a_full_queue_answers_503_with_retry_after(engine: Engine, one_may_wait: tuple[Server, EngineBackend]) -> None:
    server, backend = one_may_wait
    body = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 8, "temperature": 0}
    headers = {"Authorization": f"Bearer {KEY}"}
    statuses: list[int] = []

    def post() -> None:
        statuses.append(
            httpx.post(f"{server.url}/chat/completions", json=body, headers=headers, timeout=120).status_code
        )

    target = engine.target
    assert target is not None
    never_ends = GenerateRequest(  # the engine is busy with a long answer (its end banned) until cancelled
        messages=[{"role": "user", "content": "Hi"}],
        max_tokens=1_000_000,
        sampling=SamplingParams(logit_bias=tuple((t, -100.0) for t in range(target.n_vocab) if target.is_eog(t))),
    )
    long = backend.submit(never_ends)
    while not isinstance(long.next(timeout=60), TextChunk):
        pass  # it writes its answer now (a prompt still being read would step aside for the next one)
    queued = backend.submit(GenerateRequest(messages=[{"role": "user", "content": "Hi"}], max_tokens=8))
    try:  # one runs, one waits behind it: the queue is full
        assert backend.waiting() == 2
        third = httpx.post(f"{server.url}/chat/completions", json=body, headers=headers, timeout=30)
        assert third.status_code == 503
        assert third.headers["Retry-After"] == "2" and third.json()["error"]["code"] == "busy"
    finally:
        long.cancel.set()
    events = list(queued.iterate())
    assert events and events[-1].stats.generated_tokens >= 1  # the queued one was answered, not lost
    post()
    assert statuses == [200]  # and the queue takes requests again


def test_binding_beyond_this_machine_warns() -> None:
    assert exposure_warning("127.0.0.1", None) is None and exposure_warning("localhost", None) is None
    warning = exposure_warning("0.0.0.0", None)
    assert warning is not None and "other machines" in warning and "--api-key" in warning
    assert "--api-key" not in (exposure_warning("192.168.1.5", "k") or "")
