"""The window's "Serve API" switch: API requests and the window's chat take turns on one engine."""

from __future__ import annotations

import socket
import threading
from typing import Any

import openai

from tests.ui.conftest import ANSWER_TIMEOUT_MS
from tests.ui.helpers import last_answer, next_answer, type_and_send
from tests.ui.test_responsiveness import MAX_GAP_S, GapProbe


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ask(port: int, results: list[Any], stream: bool = False, max_tokens: int = 24) -> None:
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=0, timeout=120)
    messages = [{"role": "user", "content": "Tell me about the moon."}]
    try:
        if stream:
            parts = client.chat.completions.create(
                model="x", messages=messages, temperature=0, max_tokens=max_tokens, stream=True
            )
            results.append("".join(p.choices[0].delta.content or "" for p in parts if p.choices))
        else:
            reply = client.chat.completions.create(model="x", messages=messages, temperature=0, max_tokens=max_tokens)
            results.append(reply)
    except Exception as exc:  # noqa: BLE001 - reported by the test's assertion
        results.append(exc)


def test_switching_the_api_on_while_chatting_serves_requests_in_turn(qtbot: Any, make_window: Any, models: Any) -> None:
    port = _free_port()
    window = make_window(target_path=models.target, max_tokens=300, api_port=port)
    results: list[Any] = []
    with next_answer(qtbot, window.client) as chat:
        type_and_send(qtbot, window, "Write a long story.")
        qtbot.waitUntil(lambda: len(chat.pieces) > 2, timeout=ANSWER_TIMEOUT_MS)
        window.serve_action.trigger()  # switch the API on mid-answer
        assert window.api.running and window.serve_action.isChecked()
        asker = threading.Thread(target=_ask, args=(port, results), daemon=True)
        asker.start()
    assert chat.done is not None and chat.done.stats.generated_tokens == 300  # the chat was not disturbed
    qtbot.waitUntil(lambda: bool(results), timeout=ANSWER_TIMEOUT_MS)
    reply = results[0]
    assert not isinstance(reply, Exception), reply
    assert reply.usage.completion_tokens == 24 and reply.choices[0].message.content
    assert reply.model == "target"
    qtbot.waitUntil(lambda: f"API http://127.0.0.1:{port}/v1 · 1 request" == window.status.api.text(), timeout=5000)
    assert len(window.chat_view.messages) == 2  # API requests never touch the conversation
    assert last_answer(window).text == chat.done.text
    window.serve_action.trigger()
    assert not window.api.running and not window.status.api.isVisible()


def test_the_window_stays_responsive_while_an_api_request_streams(
    qtbot: Any, make_window: Any, models: Any, record_property: Any
) -> None:
    port = _free_port()
    window = make_window(target_path=models.target, api_port=port)
    window.serve_action.trigger()
    probe = GapProbe()
    probe.start()
    results: list[Any] = []
    threading.Thread(target=_ask, args=(port, results, True, 400), daemon=True).start()
    qtbot.waitUntil(lambda: bool(results), timeout=ANSWER_TIMEOUT_MS)
    probe.timer.stop()
    record_property("max_event_loop_gap_ms", round(probe.max_gap * 1000, 1))
    whole: list[Any] = []
    threading.Thread(target=_ask, args=(port, whole, False, 400), daemon=True).start()
    qtbot.waitUntil(lambda: bool(whole), timeout=ANSWER_TIMEOUT_MS)
    assert isinstance(results[0], str) and results[0] == whole[0].choices[0].message.content  # streamed = whole
    assert probe.ticks > 20 and probe.max_gap < MAX_GAP_S, f"the event loop stalled for {probe.max_gap * 1000:.0f} ms"
    # the dial is the chat's: an API answer leaves it where the chat left it (nothing answered yet)
    assert window.side.gauge.property("tokensPerSecond") == 0


def test_quitting_while_an_api_answer_streams_is_quick_and_prints_no_traceback(
    qtbot: Any, make_window: Any, models: Any, capfd: Any
) -> None:
    import time

    import httpx2 as httpx

    from tests.server.live_server import LogRecorder

    port = _free_port()
    window = make_window(target_path=models.target, api_port=port)
    window.serve_action.trigger()
    lines: list[str] = []
    ended: list[str] = []

    def stream() -> None:
        body = {"messages": [{"role": "user", "content": "Write a long story."}], "max_tokens": 3000, "stream": True}
        try:
            with httpx.stream("POST", f"http://127.0.0.1:{port}/v1/chat/completions", json=body, timeout=60) as reply:
                lines.extend(reply.iter_lines())  # one by one, as they arrive
            ended.append("ended")
        except httpx.HTTPError as exc:
            ended.append(type(exc).__name__)

    with LogRecorder() as log:
        threading.Thread(target=stream, daemon=True).start()
        qtbot.waitUntil(
            lambda: len([line for line in lines if line.startswith("data: ")]) > 2, timeout=ANSWER_TIMEOUT_MS
        )
        quitting = time.monotonic()
        window.close()  # what quitting the app does, with Serve API on and an answer streaming
        assert time.monotonic() - quitting < 3.0
        qtbot.waitUntil(lambda: bool(ended), timeout=5000)  # the client was answered or cut off, not left hanging
    err = capfd.readouterr().err
    assert log.tracebacks() == [] and "CancelledError" not in err and "Traceback" not in err, err


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "enum": ["Paris", "Tokyo"]}},
            "required": ["city"],
        },
    },
}


def test_a_tool_call_through_the_windows_api_reaches_the_client(qtbot: Any, make_window: Any, models: Any) -> None:
    import json

    port = _free_port()
    window = make_window(target_path=models.tools, api_port=port)
    window.serve_action.trigger()
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=0, timeout=120)
    forced = {"type": "function", "function": {"name": "get_weather"}}
    ask: dict[str, Any] = {
        "model": "x",
        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
        "max_tokens": 60,
        "temperature": 0,
        "tools": [WEATHER],
        "tool_choice": forced,
    }
    results: list[Any] = []
    threading.Thread(target=lambda: results.append(client.chat.completions.create(**ask)), daemon=True).start()
    streamed: list[Any] = []
    qtbot.waitUntil(lambda: bool(results), timeout=ANSWER_TIMEOUT_MS)
    threading.Thread(
        target=lambda: streamed.append(list(client.chat.completions.create(**ask, stream=True))), daemon=True
    ).start()
    qtbot.waitUntil(lambda: bool(streamed), timeout=ANSWER_TIMEOUT_MS)
    reply = results[0]
    assert reply.choices[0].finish_reason == "tool_calls"
    (call,) = reply.choices[0].message.tool_calls
    assert call.function.name == "get_weather" and json.loads(call.function.arguments)["city"] in ("Paris", "Tokyo")
    pieces = [d.function for c in streamed[0] if c.choices for d in c.choices[0].delta.tool_calls or ()]
    assert "".join(p.arguments or "" for p in pieces) == call.function.arguments  # streamed: the same call
