"""Streams that clients trust while a long prompt is read: on every streaming endpoint the
status and headers come at once, then keep-alives while the engine reads the prompt (an SSE
comment with its progress; Anthropic's ``ping``) and nothing else is sent; ``message_start`` goes
at once with the prompt's ``input_tokens``; a request queued behind another answer gets its
headers and keep-alives too. qwen-code and Claude Code sent their whole 16k-26k-token request
again after 120 s / 300 s of silence, and the engine read the prompt twice.

The real server over the real engine; the keep-alive interval is lowered to 20 ms so that the
factory model's reading of a 2,700-token prompt (about 0.7 s) sends many."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2 as httpx
import openai
import pytest

from desktop_app.engine import Engine
from desktop_app.engine_process.protocol import AutoPlan, Load
from desktop_app.server.limits import ServerLimits
from tests.server.live_server import Server, engine_backend

PING_S = 0.02
LIMITS = ServerLimits(stream_ping_s=PING_S, stream_start_s=0.5)
READING = re.compile(r"^: reading the prompt (\d+)/(\d+) tokens$")


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with engine_backend(Load(str(models.target), plan=AutoPlan(measure=False))) as backend:
        served = Server(backend, limits=LIMITS)
        yield served
        served.stop()


def long_text(tag: str) -> str:
    """About 2,700 tokens, its start ``tag`` (each test's own: no cached prefix to reuse)."""
    return f"{tag}: " + " ".join(f"word{i}" for i in range(700))


def bodies(tag: str) -> dict[str, dict[str, Any]]:
    text = long_text(tag)
    chat = {"messages": [{"role": "user", "content": text}], "max_tokens": 4, "temperature": 0, "stream": True}
    return {
        "chat/completions": chat,
        "completions": {"prompt": text, "max_tokens": 4, "temperature": 0, "stream": True},
        "messages": {"model": "x", "max_tokens": 4, "temperature": 0, **chat},
        "responses": {"input": text, "max_output_tokens": 4, "temperature": 0, "stream": True},
    }


# The first line that carries the answer (a token), per endpoint.
FIRST_TOKEN = {
    "chat/completions": "data: ",
    "completions": "data: ",
    "messages": "event: content_block_start",
    "responses": "event: response.output_item.added",
}


def timed_lines(url: str, body: dict[str, Any]) -> tuple[httpx.Response, float, list[tuple[float, str]]]:
    """The response, when its headers came, and each line with when it came (seconds from the send)."""
    began = time.perf_counter()
    with httpx.stream("POST", url, json=body, timeout=60) as response:
        headers_at = time.perf_counter() - began
        lines = [(time.perf_counter() - began, line) for line in response.iter_lines()]
    return response, headers_at, lines


def data_of(lines: list[tuple[float, str]], event: str) -> dict[str, Any]:
    texts = [line for _, line in lines]
    return dict(json.loads(texts[texts.index(f"event: {event}") + 1].removeprefix("data: ")))


@pytest.mark.parametrize("endpoint", list(FIRST_TOKEN))
def test_headers_at_once_then_keep_alives_while_the_prompt_is_read(server: Server, endpoint: str) -> None:
    response, headers_at, lines = timed_lines(f"{server.url}/{endpoint}", bodies(endpoint)[endpoint])
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    texts = [line for _, line in lines]
    first_token = next(i for i, line in enumerate(texts) if line.startswith(FIRST_TOKEN[endpoint]))
    reading = [(i, READING.match(line)) for i, line in enumerate(texts[:first_token])]
    progress = [(i, int(m.group(1)), int(m.group(2))) for i, m in reading if m]
    # The prompt was still being read after the headers went: its progress came as comments.
    assert len(progress) >= 3, texts[:first_token]
    assert any(done < total for _, done, total in progress)
    assert [done for _, done, _ in progress] == sorted(done for _, done, _ in progress)
    assert all(total > 2000 for _, _, total in progress)
    assert headers_at < lines[progress[0][0]][0] <= lines[first_token][0]
    if endpoint == "messages":
        assert texts[:2] == ["event: message_start", texts[1]] and texts[1].startswith("data: ")
        pings = [i for i, line in enumerate(texts[:first_token]) if line == "event: ping"]
        assert len(pings) >= 3 and all(texts[i + 1] == 'data: {"type": "ping"}' for i in pings)
        start_usage = data_of(lines, "message_start")["message"]["usage"]
        final_usage = data_of(lines, "message_delta")["usage"]
        assert start_usage == {"input_tokens": final_usage["input_tokens"], "output_tokens": 0}
        assert start_usage["input_tokens"] == progress[0][2]
    elif endpoint == "responses":
        events = [line for line in texts if line.startswith("event: ")]
        assert events[:2] == ["event: response.created", "event: response.in_progress"]
        assert texts.index("event: response.in_progress") < progress[0][0]
    else:
        assert not any(line.startswith("data: ") for line in texts[:first_token])  # comments only, then the answer


def test_a_request_queued_behind_another_gets_its_headers_and_keep_alives(server: Server, engine: Engine) -> None:
    running: dict[str, Any] = {}
    target = engine.target
    assert target is not None
    never_ends = {str(t): -100 for t in range(target.n_vocab) if target.is_eog(t)}  # it runs to its length
    body = {**bodies("first")["chat/completions"], "max_tokens": 1000, "logit_bias": never_ends}
    started = threading.Event()

    def long_answer() -> None:
        with httpx.stream("POST", f"{server.url}/chat/completions", json=body, timeout=120) as r:
            lines = []
            for line in r.iter_lines():
                lines.append(line)
                if line.startswith("data: {"):  # it has text: the next request waits for all of it
                    started.set()  # (while a prompt is only being read, another's answer runs first)
            running["lines"] = lines
        running["ended"] = time.perf_counter()

    thread = threading.Thread(target=long_answer)
    thread.start()
    assert started.wait(30)
    began = time.perf_counter()
    short = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "stream": True}
    response, headers_at, lines = timed_lines(f"{server.url}/chat/completions", short)
    thread.join(timeout=60)
    assert response.status_code == 200
    assert began + headers_at < running["ended"]  # its headers came while the other answer ran
    texts = [line for _, line in lines]
    assert texts[0] == ": waiting for the engine"
    assert texts[-2:] == ["data: [DONE]", ""] or texts[-1] == "data: [DONE]"
    assert running["lines"][-2:] == ["data: [DONE]", ""] or running["lines"][-1] == "data: [DONE]"


def test_the_sdks_read_streams_with_keep_alives(server: Server) -> None:
    seen = bytearray()
    client = openai.OpenAI(
        base_url=server.url, api_key="none", max_retries=0, http_client=httpx.Client(transport=Tap(seen))
    )
    body = bodies("sdk openai")["chat/completions"]
    options: dict[str, Any] = {"model": "x", "messages": body["messages"], "max_tokens": 4, "temperature": 0}
    streamed = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(**options, stream=True))
    assert b"\n: reading the prompt " in seen or seen.startswith(b": reading the prompt ")
    assert streamed == client.chat.completions.create(**options).choices[0].message.content

    seen.clear()
    claude = anthropic.Anthropic(
        base_url=server.base, api_key="none", max_retries=0, http_client=httpx.Client(transport=Tap(seen))
    )
    ask: dict[str, Any] = {
        "model": "x",
        "max_tokens": 4,
        "messages": [{"role": "user", "content": long_text("sdk anthropic")}],
        "extra_body": {"temperature": 0},  # the 2026 SDK has no temperature
    }
    with claude.messages.stream(**ask) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_message()
    assert b"event: ping" in seen and "ping" not in kinds  # the SDK reads past them
    assert kinds[0] == "message_start" and final.usage.input_tokens > 2000
    assert [b.text for b in final.content] == [b.text for b in claude.messages.create(**ask).content]  # type: ignore[union-attr]

    seen.clear()
    with client.responses.stream(model="x", input=long_text("sdk responses"), max_output_tokens=4) as events:
        kinds = [event.type for event in events]
    assert b"\n: reading the prompt " in seen
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.incomplete"


class Tap(httpx.HTTPTransport):
    """A transport that keeps every byte of the answers it reads in ``seen``."""

    def __init__(self, seen: bytearray) -> None:
        super().__init__()
        self.seen = seen

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        response.stream = _Tapped(response.stream, self.seen)  # type: ignore[arg-type]
        return response


class _Tapped(httpx.SyncByteStream):
    def __init__(self, stream: Any, seen: bytearray) -> None:
        self.stream = stream
        self.seen = seen

    def __iter__(self) -> Iterator[bytes]:
        for piece in self.stream:
            self.seen.extend(piece)
            yield piece

    def close(self) -> None:
        self.stream.close()
