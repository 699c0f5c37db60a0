"""The worker's front door: our listener on the public port, llama.cpp's RPC server behind it.

llama.cpp's RPC server serves one client at a time and waits on it without a timeout, so one
idle TCP connection (a port scan, a stuck client) kept a worker from every engine until it
closed. The gate accepts every connection at once and waits up to HELLO_TIMEOUT_S for its
complete RPC hello (command 14, a size, that many bytes: what :func:`rpc.probe` and llama.cpp's
client send first); a connection that does not send it in time, or sends something else, is
closed. Connections that did are relayed one at a time, in order, to llama.cpp's server
listening on a loopback-only port (the next waits, as it did in llama.cpp's own queue).

The limit that stays: a client that completed the hello holds the worker for as long as it keeps
the connection, since an engine holds its connection for as long as its model is loaded and
may be idle between answers. Plain sockets only (no llama.cpp, no Qt).
"""

from __future__ import annotations

import selectors
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field

HELLO_CMD = 14  # RPC_CMD_HELLO ("must be always 14")
HELLO_TIMEOUT_S = 5.0  # an engine sends its hello right after connecting, even across a slow network
MAX_HELLO_PAYLOAD = 1024  # the hello carries 24 bytes of capabilities (RPC_CONN_CAPS_SIZE)
MAX_WAITING = 64  # connections still owing their hello; past that the oldest is dropped (bounded fds)
UPSTREAM_CONNECT_S = 10.0  # llama.cpp's server starts listening a moment after the gate
CHUNK = 1 << 20  # relay read size: tensors cross in large writes
_HEADER = struct.Struct("<BQ")  # command byte, payload size


@dataclass
class _Waiting:
    sock: socket.socket
    deadline: float
    received: bytearray = field(default_factory=bytearray)


def hello_state(data: bytes | bytearray) -> bool | None:
    """True when ``data`` starts with a complete hello, None while it may still become one,
    False when it cannot (another command first, or an absurd size)."""
    if len(data) < _HEADER.size:
        return None if not data or data[0] == HELLO_CMD else False
    command, size = _HEADER.unpack_from(data)
    if command != HELLO_CMD or size > MAX_HELLO_PAYLOAD:
        return False
    return True if len(data) >= _HEADER.size + size else None


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (IPv4 or IPv6, as the name resolves); OSError if taken."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[
        0
    ]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as llama.cpp's server: restart at once
        sock.bind(address)
        sock.listen(MAX_WAITING)
    except OSError:
        sock.close()
        raise
    return sock


class RpcGate:
    """Relays connections from ``listener`` that send a hello in time to ``upstream``, one at a
    time. :meth:`serve_forever` runs until :meth:`close` or until ``alive()`` turns false (the
    server behind it stopped)."""

    def __init__(
        self,
        listener: socket.socket,
        upstream: tuple[str, int],
        hello_timeout_s: float = HELLO_TIMEOUT_S,
        alive: Callable[[], bool] = lambda: True,
    ) -> None:
        self.listener = listener
        self.upstream = upstream
        self.hello_timeout_s = hello_timeout_s
        self._alive = alive
        self._closed = False
        self._waiting: dict[socket.socket, _Waiting] = {}
        self._ready: deque[tuple[socket.socket, bytes]] = deque()
        self._session: threading.Thread | None = None
        self._wake_r, self._wake_w = socket.socketpair()  # a session that ended wakes the loop
        self.dropped = 0  # connections closed for sending no hello in time (tests read it)

    def close(self) -> None:
        self._closed = True
        with suppress(OSError):
            self._wake_w.send(b"x")

    def serve_forever(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self.listener, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            try:
                while not self._closed and self._alive():
                    deadlines = [w.deadline for w in self._waiting.values()]
                    # wake for the next deadline, and at least twice a second to see alive()
                    timeout = max(0.0, min([*deadlines, time.monotonic() + 0.5]) - time.monotonic())
                    for key, _ in selector.select(timeout):
                        if key.fileobj is self.listener:
                            self._accept(selector)
                        elif key.fileobj is self._wake_r:
                            with suppress(OSError):
                                self._wake_r.recv(64)
                        else:
                            self._read_hello(selector, self._waiting[key.fileobj])  # type: ignore[index]
                    now = time.monotonic()
                    for waiting in [w for w in self._waiting.values() if w.deadline <= now]:
                        self._drop(selector, waiting)
                    if self._ready and (self._session is None or not self._session.is_alive()):
                        client, hello = self._ready.popleft()
                        self._session = threading.Thread(
                            target=self._relay, args=(client, hello), name="rpc-gate-session", daemon=True
                        )
                        self._session.start()
            finally:
                for waiting in list(self._waiting.values()):
                    self._drop(selector, waiting)
                for client, _ in self._ready:
                    client.close()
                self._wake_r.close()
                self._wake_w.close()

    # ------------------------------------------------------------------ waiting for hellos
    def _accept(self, selector: selectors.BaseSelector) -> None:
        try:
            client, _ = self.listener.accept()
        except OSError:  # the client gave up already, or out of descriptors for now
            return
        client.setblocking(False)
        waiting = _Waiting(client, time.monotonic() + self.hello_timeout_s)
        self._waiting[client] = waiting
        selector.register(client, selectors.EVENT_READ)
        if len(self._waiting) > MAX_WAITING:
            self._drop(selector, next(iter(self._waiting.values())))

    def _read_hello(self, selector: selectors.BaseSelector, waiting: _Waiting) -> None:
        try:
            data = waiting.sock.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        waiting.received += data
        state = hello_state(waiting.received) if data else False
        if state is None:
            return
        selector.unregister(waiting.sock)
        del self._waiting[waiting.sock]
        if state:
            waiting.sock.setblocking(True)
            self._ready.append((waiting.sock, bytes(waiting.received)))
        else:
            waiting.sock.close()

    def _drop(self, selector: selectors.BaseSelector, waiting: _Waiting) -> None:
        selector.unregister(waiting.sock)
        del self._waiting[waiting.sock]
        self.dropped += 1
        waiting.sock.close()

    # ------------------------------------------------------------------ relaying
    def _relay(self, client: socket.socket, hello: bytes) -> None:
        try:
            upstream = self._connect_upstream()
        except OSError:
            client.close()
            self._wake()
            return
        for sock in (client, upstream):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # RPC is many small round trips
        try:
            upstream.sendall(hello)
            back = threading.Thread(target=_pump, args=(upstream, client), name="rpc-gate-back", daemon=True)
            back.start()
            _pump(client, upstream)
            back.join()
        except OSError:
            pass
        finally:
            client.close()
            upstream.close()
            self._wake()

    def _connect_upstream(self) -> socket.socket:
        deadline = time.monotonic() + UPSTREAM_CONNECT_S
        while True:
            try:
                upstream = socket.create_connection(self.upstream, timeout=UPSTREAM_CONNECT_S)
                upstream.settimeout(None)  # a session may stay idle for as long as its model is loaded
                return upstream
            except ConnectionRefusedError:
                if time.monotonic() > deadline or self._closed:
                    raise
                time.sleep(0.05)

    def _wake(self) -> None:
        with suppress(OSError):
            self._wake_w.send(b"x")


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy ``source`` to ``sink`` until either ends, then end both: llama.cpp never half-closes,
    so an end on either side is the session's (and the other direction's pump returns too)."""
    try:
        while data := source.recv(CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    for sock in (source, sink):
        with suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
