"""Property-based fuzzing of the API against a real server and the real engine: a few hundred
generated requests (the real field names with random types, huge numbers, deep nesting, unicode,
random methods, paths and headers, content-length lies) each get a 2xx or a JSON 4xx, never a
5xx or silence; nothing is logged with a traceback; a normal request still answers after them."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import h11
import httpx2 as httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from desktop_app.server.engine_backend import EngineBackend
from desktop_app.server.limits import ServerLimits
from desktop_app.server.openai_schema import CHAT_FIELDS, COMPLETION_FIELDS
from tests.server.live_server import LogRecorder, Server

# Short timeouts so that a body shorter than its content-length costs a quarter second.
LIMITS = ServerLimits(max_body_bytes=256 * 2**10, body_timeout_s=0.25, head_timeout_s=2.0)
FIELDS = sorted(CHAT_FIELDS | COMPLETION_FIELDS)
PATHS = ["/v1/chat/completions", "/v1/completions", "/v1/models", "/v1/", "/", "/v1/chat/completions/x"]
RAW_NUMBERS = [
    "1e999",
    "-1e999",
    "NaN",
    "Infinity",
    "-Infinity",
    "9" * 400,
    "0." + "1" * 400,
    "-" + "7" * 5000,
    "1" * 41,
    "1E400",
    "-0",
    "0.0000000000000000000000000000000000000001",
]

leaves = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats()
    | st.text(max_size=20)
)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from([*FIELDS, "role", "content", "type", "text", "include_usage"]) | st.text(max_size=8),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)
messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "system", "assistant"]) | values, "content": st.text(max_size=40) | values},
        optional={"name": values},
    ),
    max_size=3,
)
bodies = st.fixed_dictionaries(
    {},
    optional={
        "messages": messages | values,
        "prompt": st.text(max_size=40) | values,
        **{name: values for name in FIELDS if name not in ("messages", "prompt")},
        "max_tokens": st.integers(1, 3) | values,
        "temperature": st.sampled_from([0, 0.7]) | values,
        "extra": values,
    },
)


@st.composite
def payloads(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["valid", "json", "raw-number", "nested", "bytes", "text", "big"]))
    if kind == "big":
        return json.dumps({"messages": [{"role": "user", "content": "x" * (LIMITS.max_body_bytes + 1)}]}).encode()
    if kind in ("valid", "json", "raw-number"):
        body = draw(bodies)
        if kind == "valid":  # a real request with at most one field changed: answers and field-named 400s
            field, value = draw(st.sampled_from(FIELDS)), draw(values)
            body = {
                "messages": draw(messages.filter(bool)),
                "prompt": draw(st.text(max_size=40)),
                "max_tokens": 2,
                "temperature": 0,
                **({field: value} if draw(st.booleans()) else {}),
            }
            body.pop("prompt" if draw(st.booleans()) else "messages")
        body.setdefault("max_tokens", 2)  # keep the valid ones short: the engine answers each
        text = json.dumps(body, ensure_ascii=draw(st.booleans()))
        if kind == "raw-number":
            field = draw(st.sampled_from([*FIELDS, "content"]))
            text = text[:-1] + f', "{field}": {draw(st.sampled_from(RAW_NUMBERS))}}}'
        return text.encode("utf-8", "surrogatepass")  # lone surrogates make invalid UTF-8
    if kind == "nested":
        depth = draw(st.sampled_from([5, 31, 33, 1000, 100_000]))
        inner = "[" * depth + "]" * depth if draw(st.booleans()) else '{"a":' * depth + "1" + "}" * depth
        return ('{"messages": [{"role": "user", "content": "hi"}], "stop": ' + inner + "}").encode()
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    return draw(st.text(max_size=200)).encode("utf-8", "surrogatepass")


@st.composite
def api_requests(draw: st.DrawFn) -> bytes:
    """A POST to one of the generating endpoints: the bodies and headers are what vary."""
    return draw(_request(st.just("POST"), st.sampled_from(["/v1/chat/completions", "/v1/completions"])))


@st.composite
def any_requests(draw: st.DrawFn) -> bytes:
    """Any method on any path, the real ones and made-up ones."""
    paths = st.sampled_from(PATHS) | st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=30).map(
        lambda p: "/" + p
    )
    return draw(_request(st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]), paths))


@st.composite
def _request(draw: st.DrawFn, methods: st.SearchStrategy[str], paths: st.SearchStrategy[str]) -> bytes:
    method, path = draw(methods), draw(paths)
    body = draw(payloads()) if method != "GET" or draw(st.booleans()) else b""
    headers = [("Host", "127.0.0.1")]
    headers.append(("Content-Type", draw(st.sampled_from(["application/json", "text/plain", "", "application/x-www"]))))
    length = draw(st.sampled_from(["exact", "missing", "shorter", "longer", "junk", "twice"]))
    declared = {
        "exact": str(len(body)),
        "shorter": str(max(len(body) - 3, 0)),
        "longer": str(len(body) + 10),
        "junk": "12abc",
        "twice": str(len(body)),
    }.get(length)
    if declared is not None:
        headers.append(("Content-Length", declared))
    if length == "twice":
        headers.append(("Content-Length", str(len(body) + 1)))
    for _ in range(draw(st.integers(0, 2))):
        headers.append(
            (
                draw(st.sampled_from(["Authorization", "Accept", "X-Fuzz", "Expect", "Connection"])),
                draw(st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=30)),
            )
        )
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
    return head.encode("latin-1") + body


@pytest.fixture(scope="module")
def server(backend: EngineBackend) -> Iterator[Server]:
    server = Server(backend, limits=LIMITS)
    yield server
    server.stop()


def _exchange(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes; the first answer's status, headers and (for an error) its whole body."""
    method = request.split(b" ", 1)[0]
    client = h11.Connection(h11.CLIENT)
    # h11 parses an answer to a request it sent: this stand-in tells it whether a body follows (HEAD: none).
    client.send(h11.Request(method=b"HEAD" if method == b"HEAD" else b"GET", target="/", headers=[("Host", "x")]))
    client.send(h11.EndOfMessage())
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:  # a loaded machine is slow, not silent
        try:
            sock.sendall(request)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer and close before taking every byte
        status, headers, body = 0, {}, b""
        while True:
            event = client.next_event()
            if event is h11.NEED_DATA:
                try:
                    data = sock.recv(65536)
                except ConnectionResetError:
                    data = b""
                client.receive_data(data)
                if not data and status == 0:
                    raise AssertionError("the server closed the connection without an answer")
                continue
            if isinstance(event, h11.Response):
                status = event.status_code
                headers = {k.decode().lower(): v.decode() for k, v in event.headers}
                if status < 400:
                    return status, headers, b""  # a stream may go on: its start is the answer
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                return status, headers, body


def _check(server: Server, request: bytes) -> None:
    status, headers, body = _exchange(server.port, request)
    assert status < 500, (status, body[:300], request[:300])
    if status >= 400:
        assert headers.get("content-type", "").startswith("application/json"), (status, body[:300], request[:300])
        if request.startswith(b"HEAD "):
            return  # an answer to HEAD has no body
        error = json.loads(body)["error"]
        assert set(error) == {"message", "type", "param", "code"} and error["message"], body


# No shrinking: a request is a few hundred bytes and readable as it is, while shrinking re-sends
# variants for minutes (each one waits for its answer), past the suite's timeout, before it reports.
FUZZ = settings(
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)


@settings(FUZZ, max_examples=250)
@given(request=api_requests())
def _fuzz_api(server: Server, request: bytes) -> None:
    _check(server, request)


@settings(FUZZ, max_examples=100)
@given(request=any_requests())
def _fuzz_any(server: Server, request: bytes) -> None:
    _check(server, request)


def test_generated_requests_get_2xx_or_a_json_4xx(server: Server) -> None:
    with LogRecorder() as log:
        _fuzz_api(server)
        _fuzz_any(server)
    assert log.tracebacks() == []
    reply = httpx.post(
        f"{server.url}/chat/completions",
        timeout=30,
        json={"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 4, "temperature": 0},
    )
    assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"]
