"""Models → API requests…: the window's API page lists the last requests, newest first, live."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import httpx2 as httpx
from PySide6.QtCore import Qt

from desktop_app.server.request_log import ApiRequest, RequestLog
from desktop_app.ui.engine.api_page import ApiRequestsPage, cells
from tests.ui.conftest import ANSWER_TIMEOUT_MS
from tests.ui.test_api_in_window import _free_port


def _post(port: int, path: str, body: dict[str, Any], out: list[Any]) -> None:
    try:
        out.append(httpx.post(f"http://127.0.0.1:{port}{path}", json=body, timeout=120))
    except httpx.HTTPError as exc:
        out.append(exc)


def _rows(page: ApiRequestsPage) -> list[list[str]]:
    table = page.table
    return [[table.item(r, c).text() for c in range(table.columnCount())] for r in range(table.rowCount())]  # type: ignore[union-attr]


def test_the_api_page_lists_the_last_requests_with_their_tokens_and_statuses(
    qtbot: Any, make_window: Any, models: Any
) -> None:
    port = _free_port()
    window = make_window(target_path=models.target, api_port=port)
    window.serve_action.trigger()
    qtbot.mouseClick(window.status.api, Qt.MouseButton.LeftButton)  # the status bar's API address
    page = window.findChild(ApiRequestsPage)
    assert page is not None and page.isVisible() and page.table.rowCount() == 0
    page.close()
    window.menus.api_requests.trigger()  # Models → API requests…: the same page
    assert page.isVisible() and window.findChildren(ApiRequestsPage) == [page]
    assert f"Serving on http://127.0.0.1:{port}/v1" in page.note.text()
    replies: list[Any] = []
    chat = {"messages": [{"role": "user", "content": "Tell me about the moon."}], "max_tokens": 12, "temperature": 0}
    plain = {"prompt": "The moon is", "max_tokens": 7, "temperature": 0}
    streamed = {**chat, "max_tokens": 9, "stream": True, "stream_options": {"include_usage": True}}
    asked = (("/v1/chat/completions", chat), ("/v1/completions", plain), ("/v1/chat/completions", streamed))
    for n, (path, body) in enumerate(asked):
        threading.Thread(target=_post, args=(port, path, body, replies), daemon=True).start()
        qtbot.waitUntil(lambda n=n: len(replies) > n, timeout=ANSWER_TIMEOUT_MS)
    bad = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": -1}
    threading.Thread(target=_post, args=(port, "/v1/chat/completions", bad, replies), daemon=True).start()
    qtbot.waitUntil(lambda: len(replies) == 4, timeout=ANSWER_TIMEOUT_MS)
    assert [r.status_code for r in replies] == [200, 200, 200, 400], replies
    chunks = [json.loads(line[6:]) for line in replies[2].text.splitlines() if line.startswith("data: {")]
    usage = [r.json()["usage"] for r in replies[:2]] + [chunks[-1]["usage"]]
    qtbot.waitUntil(lambda: page.table.rowCount() == 4, timeout=5000)  # polled, while the window runs
    rows = _rows(page)
    assert [(row[1], row[6]) for row in rows] == [
        ("POST /v1/chat/completions", "400"),  # newest first
        ("POST /v1/chat/completions", "200"),
        ("POST /v1/completions", "200"),
        ("POST /v1/chat/completions", "200"),
    ]
    assert rows[3][2] == "target" and rows[3][3] == str(usage[0]["prompt_tokens"]) and rows[3][4] == "12"
    assert rows[2][3] == str(usage[1]["prompt_tokens"]) and rows[2][4] == "7" and float(rows[2][5]) > 0
    assert rows[1][4] == str(usage[2]["completion_tokens"]) != "0"  # a stream's, once its last chunk went
    assert rows[0][2:6] == ["—", "—", "—", "—"]  # refused before the engine saw it
    if folder := os.environ.get("SPECCHAT_SHOTS"):
        page.grab().save(str(Path(folder) / "api-requests-page.png"))
    window.serve_action.trigger()
    qtbot.waitUntil(lambda: "The API is off" in page.note.text(), timeout=5000)
    assert page.table.rowCount() == 4  # what was served stays listed


def test_the_log_keeps_the_last_requests_newest_first() -> None:
    log = RequestLog(size=3)
    for n in range(5):
        log.add(ApiRequest(0.0, "GET", f"/v1/models/{n}", "", 0, 0, 0.0, 200, 0.002))
    assert [e.endpoint for e in log.recent()] == ["/v1/models/4", "/v1/models/3", "/v1/models/2"]
    assert log.version == 5
    assert cells(log.recent()[0])[3:] == ("—", "—", "—", "200", "2 ms")
