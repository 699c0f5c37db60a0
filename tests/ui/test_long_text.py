"""Answers too long to render (a 1 MB code block, a 10,000-row table) show their first part in
bounded GUI time, finished or streaming, and the whole text stays one click away: "Show all",
the message's Copy and the code block's Copy give all of it (docs/window-speed.md, "Long text")."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QGuiApplication

from desktop_app.ui.transcript.chat_view import ChatView, MessageWidget
from desktop_app.ui.transcript.full_text import SHOW_ALL_HREF
from desktop_app.ui.transcript.render_budget import RENDER_BUDGET_MS, cut_fence_code, render_cut
from desktop_app.ui.transcript.rich_label import RichText
from tests.ui.sample_answers import code_file

MAX_RENDER_S = 1.0  # GUI-thread time for one render or refresh: 10x the budget, so a busy machine passes
MB = 1_000_000


def big_code() -> tuple[str, str]:
    """An answer with a 1 MB code block, and the block's code."""
    code = code_file(MB // 38)
    return f"Here is the whole file:\n\n```python\n{code}```\n\nThat is all.\n", code.removesuffix("\n")


def big_table() -> str:
    rows = "".join(f"| {i} | item {i} | {i * 3.5} |\n" for i in range(10_000))
    return f"The measurements:\n\n| id | name | value |\n|---|---|---|\n{rows}\nDone.\n"


@pytest.fixture()
def view(qtbot: Any) -> ChatView:
    view = ChatView()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    return view


def gui_seconds(action: Callable[[], Any]) -> float:
    """The GUI thread's CPU time for ``action`` and the layout and painting it posted."""
    start = time.thread_time()
    action()
    QCoreApplication.sendPostedEvents()
    QCoreApplication.processEvents()
    return time.thread_time() - start


def whole_text_shown(text: RichText) -> str:
    """What "Show all" opens."""
    assert text.more.isVisible() and text.more.text().startswith(f'<a href="{SHOW_ALL_HREF}">Show all (')
    text.more.linkActivated.emit(SHOW_ALL_HREF)
    dialog = text.more.dialog
    assert dialog is not None and dialog.isVisible()
    shown = dialog.view.toPlainText()
    dialog.close()
    return shown


def copied_by_button(answer: MessageWidget) -> str:
    answer.copy_button.click()
    return QGuiApplication.clipboard().text()


def test_a_finished_answer_with_a_1_mb_code_block_renders_in_bounded_time(qtbot: Any, view: ChatView) -> None:
    source, code = big_code()
    answer: MessageWidget | None = None

    def add() -> None:
        nonlocal answer
        answer = view.add_message("assistant", source, {"generated_tokens": 250_000})

    seconds = gui_seconds(add)
    assert answer is not None
    print(f"\n1 MB code block: {seconds * 1000:.0f} ms of GUI time")
    assert seconds < MAX_RENDER_S
    text = answer.content.answer_text
    assert "step_0" in text.shown_html() and "step_900" not in text.shown_html()  # its first lines
    assert whole_text_shown(text) == source
    assert copied_by_button(answer) == source
    with_copy = next(label for label in text.labels() if "copy-code:0" in label.text())
    with_copy.linkActivated.emit("copy-code:0")
    assert QGuiApplication.clipboard().text() == code


def test_a_finished_answer_with_a_10000_row_table_renders_in_bounded_time(qtbot: Any, view: ChatView) -> None:
    source = big_table()
    answer: MessageWidget | None = None

    def add() -> None:
        nonlocal answer
        answer = view.add_message("assistant", source, {"generated_tokens": 150_000})

    seconds = gui_seconds(add)
    assert answer is not None
    print(f"\n10,000-row table: {seconds * 1000:.0f} ms of GUI time")
    assert seconds < MAX_RENDER_S
    text = answer.content.answer_text
    assert "item 1<" in text.shown_html() and "item 9999" not in text.shown_html()
    assert text.more.accessibleName() == "Show all (10,006 lines)"
    assert whole_text_shown(text) == source
    assert copied_by_button(answer) == source


@pytest.mark.parametrize("kind", ["code", "table"])
def test_every_refresh_of_a_growing_huge_answer_takes_bounded_time(qtbot: Any, view: ChatView, kind: str) -> None:
    """The open block at the end is rendered again on each refresh: past the budget, not at all."""
    source = big_code()[0] if kind == "code" else big_table()
    answer = view.add_message("assistant")
    answer.set_stats(None, live=True)
    view.set_streaming(True)
    step = len(source) // 40  # 25 KB a refresh
    refreshes = []
    for end in range(step, len(source) + step, step):
        answer.append(source[end - step : end])
        refreshes.append(gui_seconds(lambda: answer.render_text(in_pieces=True)))
    ended = gui_seconds(lambda: view.set_streaming(False))
    print(f"\n{len(refreshes)} refreshes, the longest {max(refreshes) * 1000:.0f} ms; the end {ended * 1000:.0f} ms")
    assert max(refreshes) < MAX_RENDER_S and ended < MAX_RENDER_S
    assert answer.text == source
    assert whole_text_shown(answer.content.answer_text) == source


def test_a_text_is_cut_where_its_estimated_cost_passes_the_budget() -> None:
    short = "Some *text*.\n\n```python\nprint(1)\n```\n"
    assert render_cut(short).at == len(short) and render_cut(short).fence == -1
    source, code = big_code()
    cut = render_cut(source)
    assert 0 < cut.at < 20_000 and source[cut.at - 1] == "\n"  # at a line's start
    assert source[cut.fence :].startswith("```python\n")  # inside the code block
    assert cut_fence_code(source, cut) == code
    line = "word " * 200_000  # one 1 MB line: cut inside it
    assert 0 < render_cut(line).at < len(line) // 5
    rows = render_cut(big_table())
    assert rows.fence == -1 and 10 < big_table()[: rows.at].count("\n") < 1000
    assert RENDER_BUDGET_MS <= 200  # a budget a stall under reads as instant
