"""A stream from the window's API starts as the headless server's does: the window's engine
reports how far it has read the prompt, so the stream's headers and ``message_start`` (with the
prompt's ``input_tokens``) go once the prompt is made, not with the first token."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx2 as httpx

from tests.ui.conftest import ANSWER_TIMEOUT_MS
from tests.ui.test_api_in_window import _free_port


def test_a_window_stream_starts_with_the_prompt_s_size(qtbot: Any, make_window: Any, models: Any) -> None:
    port = _free_port()
    window = make_window(target_path=models.target, api_port=port)
    window.serve_action.trigger()
    text = " ".join(f"word{i}" for i in range(400))
    body = {"model": "x", "max_tokens": 4, "stream": True, "messages": [{"role": "user", "content": text}]}
    lines: list[str] = []

    def ask() -> None:  # off the window's thread, which starts the request
        with httpx.stream("POST", f"http://127.0.0.1:{port}/v1/messages", json=body, timeout=60) as reply:
            lines.extend(reply.iter_lines())

    threading.Thread(target=ask, daemon=True).start()
    qtbot.waitUntil(lambda: "event: message_stop" in lines, timeout=ANSWER_TIMEOUT_MS)
    data = [json.loads(line.removeprefix("data: ")) for line in lines if line.startswith("data: ")]
    start = data[0]["message"]["usage"]
    (ending,) = [d for d in data if d["type"] == "message_delta"]
    assert start == {"input_tokens": ending["usage"]["input_tokens"], "output_tokens": 0}
    assert start["input_tokens"] > 1000
    window.serve_action.trigger()
