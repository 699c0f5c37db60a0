"""Hostile request bodies get a 4xx with OpenAI's error object, refused before any work, and
every other error the server answers (404, 405, 500, a malformed request) is the same object."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import pytest

from desktop_app.server.backend import Job
from desktop_app.server.engine_backend import EngineBackend
from desktop_app.server.http_server import base_url
from desktop_app.server.limits import ServerLimits
from desktop_app.server.request_body import nesting_depth
from desktop_app.server.run import exposure_warning
from tests.server.live_server import LogRecorder, Server

LIMITS = ServerLimits(max_body_bytes=64 * 2**10)
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def server(backend: EngineBackend) -> Iterator[Server]:
    server = Server(backend, limits=LIMITS)
    yield server
    server.stop()


def _post(server: Server, body: bytes, path: str = "/chat/completions", **headers: str) -> httpx.Response:
    return httpx.post(
        f"{server.url}{path}", content=body, timeout=30, headers={"Content-Type": "application/json", **headers}
    )


def _error(reply: httpx.Response, status: int) -> dict[str, Any]:
    assert reply.status_code == status, reply.text
    assert reply.headers["content-type"].startswith("application/json")
    err = reply.json()["error"]
    assert set(err) == {"message", "type", "param", "code"} and err["message"]
    return dict(err)


def _chat(extra: str) -> bytes:
    return b'{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2, ' + extra.encode() + b"}"


def test_deep_nesting_is_a_400_not_a_recursion_error(server: Server) -> None:
    # The repro: `python3 -c 'print("["*100000+"]"*100000)' | curl -d @- .../chat/completions`
    err = _error(_post(server, b"[" * 30000 + b"]" * 30000), 400)
    assert "nested 30000 levels deep" in err["message"] and err["type"] == "invalid_request_error"
    inside = _chat('"user": ' + "[" * 40 + "]" * 40)
    assert "nested" in _error(_post(server, inside), 400)["message"]


def test_brackets_inside_strings_are_not_nesting(server: Server) -> None:
    assert nesting_depth('{"a": "[[[[{{{{\\"[[["}') == 1
    content = "[" * 500 + '"{\\' * 100  # escaped quotes and backslashes between the brackets
    reply = _post(
        server,
        json.dumps({"messages": [{"role": "user", "content": content}], "max_tokens": 2, "temperature": 0}).encode(),
    )
    assert reply.status_code == 200, reply.text


@pytest.mark.parametrize(
    "field,number",
    [
        ("seed", "9" * 400),
        ("temperature", "9" * 400),
        ("temperature", "0." + "1" * 400),
        ("max_tokens", "1" * 5000),
        ("top_p", "1e999"),
        ("temperature", "-Infinity"),
        ("seed", "NaN"),
    ],
)
def test_a_number_no_parameter_can_take_is_a_400_naming_its_field(server: Server, field: str, number: str) -> None:
    err = _error(_post(server, _chat(f'"{field}": {number}')), 400)
    assert err["param"] == field and err["message"].startswith(f"{field} must be")


def test_a_huge_number_elsewhere_is_a_400_too(server: Server) -> None:
    body = b'{"messages": [{"role": "user", "content": ' + b"7" * 5000 + b"}]}"
    assert "must be a string" in _error(_post(server, body), 400)["message"]


def test_a_body_over_the_limit_is_a_413_declared_or_not(server: Server) -> None:
    big = _chat('"user": "' + "x" * LIMITS.max_body_bytes + '"')
    declared = _error(_post(server, big), 413)
    assert "larger than" in declared["message"] and declared["code"] == "request_too_large"

    def chunks() -> Iterator[bytes]:  # chunked: no length to refuse up front, the reader stops at the limit
        yield big[:1000]
        while True:
            yield b"x" * 4096

    reply = httpx.post(f"{server.url}/chat/completions", content=chunks(), timeout=30)
    _error(reply, 413)


@pytest.mark.parametrize(
    "method,path,status,code",
    [
        ("GET", "/v1/nowhere", 404, "not_found"),
        ("POST", "/", 404, "not_found"),
        ("GET", "/v1/chat/completions", 405, "method_not_allowed"),
        ("DELETE", "/v1/models", 405, "method_not_allowed"),
    ],
)
def test_404_and_405_are_json_errors(server: Server, method: str, path: str, status: int, code: str) -> None:
    err = _error(httpx.request(method, f"{server.base}{path}", timeout=10), status)
    assert err["code"] == code and path in err["message"]
    if status == 404:  # every endpoint, as the routes declare them
        for endpoint in ("GET /v1/models", "POST /v1/chat/completions", "POST /v1/messages/count_tokens",
                         "POST /v1/responses", "POST /v1/embeddings", "POST /infill", "GET /health"):  # fmt: skip
            assert endpoint in err["message"], err["message"]


def test_the_api_url_of_an_ipv6_address_has_brackets() -> None:
    assert base_url("::", 8080) == "http://[::]:8080/v1"
    assert base_url("::1", 80) == "http://[::1]:80/v1"
    assert base_url("0.0.0.0", 8080) == "http://0.0.0.0:8080/v1"
    assert (exposure_warning("::", "key") or "").startswith("serving on [::]: other machines")


def test_a_malformed_http_request_is_a_json_400(server: Server) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: banana\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b"application/json" in head
    assert "not a valid HTTP request" in json.loads(body)["error"]["message"]


class _BrokenBackend:
    """A bug in the server's own code, as a backend that fails where it never should."""

    def served_models(self) -> list[Any]:
        raise KeyError("internal detail")

    def submit(self, request: Any) -> Job:
        raise AssertionError

    def waiting(self) -> int:
        return 0


def test_a_bug_is_a_json_500_without_internals_and_one_log_line() -> None:
    broken = Server(_BrokenBackend())  # type: ignore[arg-type]
    try:
        with LogRecorder() as log:
            err = _error(httpx.get(f"{broken.url}/models", timeout=10), 500)
        assert err["type"] == "server_error" and "internal detail" not in err["message"]
        ours = [r.getMessage() for r in log.records if r.name == "specchat.server"]
        assert len(ours) == 1 and "GET /v1/models failed: KeyError" in ours[0]
    finally:
        broken.stop()
