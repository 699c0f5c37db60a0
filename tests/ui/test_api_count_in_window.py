"""Anthropic's ``/v1/messages/count_tokens`` on the window's "Serve API": the window's engine
process counts the prompt, the same number as the answer's ``usage.input_tokens``, while the
context meter's own counting goes on (neither question drops the other)."""

from __future__ import annotations

import threading
from typing import Any

import anthropic

from tests.ui.conftest import ANSWER_TIMEOUT_MS
from tests.ui.test_api_in_window import _free_port
from tests.ui.test_context import counted

ASK = [{"role": "user", "content": "Tell me about the moon."}]


def _count_and_answer(port: int, results: list[Any]) -> None:
    client = anthropic.Anthropic(base_url=f"http://127.0.0.1:{port}", api_key="k", max_retries=0, timeout=120)
    try:
        counts = [client.messages.count_tokens(model="x", system="Be brief.", messages=ASK) for _ in range(3)]  # type: ignore[arg-type]
        reply = client.messages.create(
            model="x",
            max_tokens=4,
            system="Be brief.",
            messages=ASK,
            extra_body={"temperature": 0},  # type: ignore[arg-type]
        )
        results.append(([c.input_tokens for c in counts], reply.usage.input_tokens))
    except Exception as exc:  # noqa: BLE001 - reported by the test's assertion
        results.append(exc)


def test_count_tokens_is_counted_by_the_windows_engine(qtbot: Any, make_window: Any, models: Any) -> None:
    port = _free_port()
    window = make_window(target_path=models.target, drafter="none", max_tokens=24, api_port=port)
    window.serve_action.trigger()
    assert window.api.running
    results: list[Any] = []
    asker = threading.Thread(target=_count_and_answer, args=(port, results), daemon=True)
    asker.start()
    window.input.setFocus()
    qtbot.keyClicks(window.input, "What is the moon made of?")  # the meter asks meanwhile
    qtbot.waitUntil(lambda: bool(results), timeout=ANSWER_TIMEOUT_MS)
    assert not isinstance(results[0], Exception), results[0]
    counts, used = results[0]
    assert counts == [used] * 3 and used > 10
    assert counted(qtbot, window) > 5  # the meter was answered too
    window.serve_action.trigger()
