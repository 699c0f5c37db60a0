"""Connections that never finish (slowloris), clients that leave mid-upload and a server that
stops under load: each ends within its time bound, quietly, while others are served."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import httpx2 as httpx
import pytest

from desktop_app.engine.api import FinishReason, GenerateRequest
from desktop_app.engine.events import Finished, TextChunk
from desktop_app.engine.stats import GenerationStats
from desktop_app.server import jobs
from desktop_app.server.backend import Job, ServedModel
from desktop_app.server.engine_backend import EngineBackend
from desktop_app.server.limits import ServerLimits
from tests.server.live_server import LogRecorder, Server

LIMITS = ServerLimits(head_timeout_s=2.0, body_timeout_s=2.0, keep_alive_s=2)
BODY = json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2, "temperature": 0}).encode()


@pytest.fixture(scope="module")
def server(backend: EngineBackend) -> Iterator[Server]:
    server = Server(backend, limits=LIMITS)
    yield server
    server.stop()


def _connect(server: Server, first: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    if first:
        sock.sendall(first)
    return sock


def _closed_within(sock: socket.socket, seconds: float) -> tuple[bool, bytes]:
    """Whether the server closed the connection within ``seconds``, and what it sent before."""
    sock.settimeout(seconds)
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except TimeoutError:
        return False, received
    except ConnectionResetError:
        pass
    return True, received


def _normal_request(server: Server) -> int:
    return httpx.post(f"{server.url}/chat/completions", content=BODY, timeout=30).status_code


def test_slowloris_connections_are_closed_while_others_are_served(server: Server) -> None:
    partial = [
        b"",
        b"POST /v1/chat/completions HTTP/1.1\r\n",
        b"GET /v1/mod",
        b"POST /v1/completions HTTP/1.1\r\nHost: a\r\nX-",
    ]
    socks = [_connect(server, partial[i % len(partial)]) for i in range(10)]
    opened = time.monotonic()
    try:
        assert _normal_request(server) == 200  # served while ten connections hang
        # One of them keeps trickling its headers, a byte a second: the deadline is from its first byte.
        trickler = socks[1]
        for _ in range(int(LIMITS.head_timeout_s) + 1):
            time.sleep(1)
            try:
                trickler.sendall(b"X")
            except OSError:
                break
        results = [_closed_within(sock, LIMITS.head_timeout_s + 3) for sock in socks]
        assert all(closed for closed, _ in results), f"{sum(not c for c, _ in results)} of 10 still open"
        assert time.monotonic() - opened < LIMITS.head_timeout_s + 5
        said = results[1][1]
        assert said.startswith(b"HTTP/1.1 408") and b'"request_timeout"' in said
    finally:
        for sock in socks:
            sock.close()
    assert _normal_request(server) == 200


def test_a_body_that_never_completes_gets_a_408_and_the_connection_closes(server: Server) -> None:
    head = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % len(BODY)
    )
    sock = _connect(server, head + BODY[:10])
    try:
        closed, said = _closed_within(sock, LIMITS.body_timeout_s + 3)
    finally:
        sock.close()
    assert closed and said.startswith(b"HTTP/1.1 408")
    assert "did not arrive within 2 s" in json.loads(said.partition(b"\r\n\r\n")[2])["error"]["message"]


def test_an_idle_keep_alive_connection_is_closed(server: Server) -> None:
    request = b"GET /v1/models HTTP/1.1\r\nHost: a\r\n\r\n"
    sock = _connect(server, request)
    try:
        sock.settimeout(10)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        closed, _ = _closed_within(sock, LIMITS.keep_alive_s + 3)
    finally:
        sock.close()
    assert closed


def test_a_client_that_leaves_during_its_upload_leaves_no_traceback(server: Server) -> None:
    head = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100000\r\n\r\n"
    )
    with LogRecorder() as log:
        for _ in range(3):
            sock = _connect(server, head + b'{"messages": [')
            time.sleep(0.2)  # the handler is reading the body
            sock.close()
        time.sleep(0.5)
        assert _normal_request(server) == 200
    assert log.tracebacks() == []


class _EndlessBackend:
    """An engine that never answers, as a long generation looks to the server."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []

    def served_models(self) -> list[ServedModel]:
        return [ServedModel("endless", 4096)]

    def reasoning_format(self) -> None:
        return None

    def tool_format(self) -> None:
        return None

    def submit(self, request: GenerateRequest) -> Job:
        self.jobs.append(Job(request))
        return self.jobs[-1]

    def waiting(self) -> int:
        return 0


@pytest.mark.slow  # measures time
def test_stopping_with_answers_in_flight_is_quick_and_quiet() -> None:
    backend = _EndlessBackend()
    endless = Server(backend)  # type: ignore[arg-type]
    outcomes: list[object] = []

    def ask(stream: bool) -> None:
        body = json.dumps({"messages": [{"role": "user", "content": "hi"}], "stream": stream}).encode()
        try:
            outcomes.append(httpx.post(f"{endless.url}/chat/completions", content=body, timeout=30).status_code)
        except httpx.HTTPError as exc:
            outcomes.append(type(exc).__name__)

    askers = [threading.Thread(target=ask, args=(stream,)) for stream in (False, True)]
    with LogRecorder() as log:
        for asker in askers:
            asker.start()
        deadline = time.time() + 10
        while len(backend.jobs) < 2 and time.time() < deadline:
            time.sleep(0.05)
        stopping = time.monotonic()
        endless.stop()
        assert not endless.thread.is_alive() and time.monotonic() - stopping < 1.5
        for asker in askers:
            asker.join(timeout=10)
    assert len(outcomes) == 2 and 200 not in outcomes  # both were cut off, neither hung
    assert all(job.cancel.is_set() for job in backend.jobs)  # the generations were stopped too
    assert log.tracebacks() == []


class _ScriptedBackend(_EndlessBackend):
    """An engine that says "Hello", and ends its answer a moment after the stream sent it."""

    def submit(self, request: GenerateRequest) -> Job:
        job = super().submit(request)

        def answer() -> None:
            job.put(TextChunk("Hello"))
            while not job.events.empty():  # the handler took it, and is pausing before the next piece
                time.sleep(0.01)
            time.sleep(0.2)
            job.put(Finished("Hello", [1], GenerationStats(generated_tokens=1, finish_reason=FinishReason.STOP)))
            job.finish()

        threading.Thread(target=answer, daemon=True).start()
        return job


def test_a_streamed_answer_ends_as_soon_as_it_is_finished(monkeypatch: pytest.MonkeyPatch) -> None:
    """Text is sent in pieces at most every FLUSH_S, but the answer's end is not held back by that
    pause: with a pause of 30 s the stream still ends right after the answer does."""
    monkeypatch.setattr(jobs, "FLUSH_S", 30.0)
    scripted = Server(_ScriptedBackend())  # type: ignore[arg-type]
    try:
        body = {"messages": [{"role": "user", "content": "hi"}], "stream": True}
        started = time.monotonic()
        with httpx.stream("POST", f"{scripted.url}/chat/completions", json=body, timeout=60) as reply:
            lines = [line for line in reply.iter_lines() if line.startswith("data: ")]
        assert time.monotonic() - started < 10
    finally:
        scripted.stop()
    assert lines[-1] == "data: [DONE]"
    deltas = [json.loads(line[6:])["choices"][0]["delta"].get("content") for line in lines[:-1]]
    assert "".join(d or "" for d in deltas) == "Hello"
    assert json.loads(lines[-2][6:])["choices"][0]["finish_reason"] == "stop"
