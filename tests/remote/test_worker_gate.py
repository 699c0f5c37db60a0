"""The worker's gate: an idle connection is dropped after a few seconds instead of holding the
worker (llama.cpp's RPC server serves one client at a time and never times one out)."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_app.engine import Engine
from desktop_app.engine.api import ModelOptions
from desktop_app.engine.llama import rpc
from desktop_app.engine.llama.rpc_gate import HELLO_TIMEOUT_S, RpcGate, hello_state, listen
from tests.helpers import run, user
from tests.remote.workers import RunningWorker, start_worker

HELLO = struct.pack("<BQ", 14, 24) + bytes(24)


class _Upstream:
    """A stand-in for llama.cpp's server: one client at a time; answers each read with its
    byte count and the number of the connection it came on."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                while data := conn.recv(65536):
                    conn.sendall(struct.pack("<QQ", len(data), self.connections))


@pytest.fixture
def gate() -> Iterator[RpcGate]:
    upstream = _Upstream()
    gate = RpcGate(listen("127.0.0.1", 0), upstream.listener.getsockname(), hello_timeout_s=0.5)
    thread = threading.Thread(target=gate.serve_forever, daemon=True)
    thread.start()
    yield gate
    gate.close()
    thread.join(5)
    gate.listener.close()
    upstream.listener.close()


def _connect(gate: RpcGate) -> socket.socket:
    sock = socket.create_connection(gate.listener.getsockname()[:2], timeout=5)
    return sock


def test_the_hello_is_recognised_byte_by_byte() -> None:
    assert hello_state(b"") is None and hello_state(HELLO[:5]) is None and hello_state(HELLO[:-1]) is None
    assert hello_state(HELLO) is True and hello_state(HELLO + b"more") is True
    assert hello_state(b"GET / HTTP/1.1\r\n") is False  # another protocol: dropped at once
    assert hello_state(struct.pack("<BQ", 14, 1 << 40)) is False  # an absurd size: dropped at once


@pytest.mark.slow  # measures a timeout
def test_an_idle_connection_is_dropped_and_the_next_client_is_served_meanwhile(gate: RpcGate) -> None:
    start = time.monotonic()
    idle = _connect(gate)
    client = _connect(gate)
    client.sendall(HELLO)
    assert struct.unpack("<QQ", client.recv(16)) == (len(HELLO), 1)  # served while the idle one waits
    assert idle.recv(1) == b""  # closed by the gate
    assert 0.4 < time.monotonic() - start < 3.0 and gate.dropped == 1  # after the 0.5 s timeout
    client.sendall(b"abc")
    assert struct.unpack("<QQ", client.recv(16)) == (3, 1)  # the session goes on after its hello
    idle.close()
    client.close()


def test_clients_with_a_hello_wait_their_turn_in_order(gate: RpcGate) -> None:
    first, second = _connect(gate), _connect(gate)
    first.sendall(HELLO)
    assert struct.unpack("<QQ", first.recv(16))[1] == 1
    second.sendall(HELLO)
    second.settimeout(0.5)
    with pytest.raises(TimeoutError):
        second.recv(16)  # one client at a time, as llama.cpp's server
    first.close()
    second.settimeout(5)
    assert struct.unpack("<QQ", second.recv(16)) == (len(HELLO), 2)
    second.close()


@pytest.mark.slow  # measures time
def test_garbage_is_dropped_without_waiting(gate: RpcGate) -> None:
    sock = _connect(gate)
    sock.sendall(b"GET / HTTP/1.1\r\n\r\n")
    start = time.monotonic()
    assert sock.recv(1) == b""
    assert time.monotonic() - start < 0.4  # before the hello timeout
    sock.close()


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningWorker]:
    running = start_worker(tmp_path_factory.mktemp("gate-worker"))
    yield running
    running.kill()


def test_an_idle_connection_does_not_block_a_real_worker(models: Any, worker: RunningWorker) -> None:
    """Issue 33: one idle TCP connection blocked `specchat worker` until it closed."""
    with socket.create_connection((worker.address.host, worker.address.port)) as idle:
        time.sleep(0.2)  # the idle connection is the first the worker sees
        start = time.monotonic()
        rpc.probe(worker.address, timeout_s=3.0)
        engine = Engine()
        try:
            engine.load_target(models.target, ModelOptions(n_ctx=256, n_threads=1, workers=(worker.address,)))
            result, _ = run(engine, messages=user("Name three colours."), max_tokens=8, spec="off")
        finally:
            engine.close()
        assert len(result.token_ids) == 8
        assert time.monotonic() - start < HELLO_TIMEOUT_S  # served before the idle one even timed out
        idle.settimeout(HELLO_TIMEOUT_S + 5)
        assert idle.recv(1) == b""  # and the idle one was dropped
    assert "Accepted client connection" in worker.output()
    assert f"serving on {worker.address}" in worker.output()


@pytest.mark.slow  # starts a worker process
def test_a_worker_serves_again_after_a_client_that_sent_garbage(worker: RunningWorker, tmp_path: Path) -> None:
    with socket.create_connection((worker.address.host, worker.address.port)) as sock:
        sock.sendall(b"\x00" * 64)
        sock.settimeout(5)
        assert sock.recv(1) == b""
    rpc.probe(worker.address, timeout_s=3.0)
