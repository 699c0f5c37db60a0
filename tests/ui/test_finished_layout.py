"""A finished message's text is laid out once per width it is shown at, so the render budget shows
ordinary long answers whole: a 250-line code answer, a 100-row table; and the heights it works
out are QLabel's own, so nothing is clipped, and a code line wider than the transcript still
widens the message, which scrolls sideways (docs/window-speed.md, "Long text")."""

from __future__ import annotations

import time
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QLabel

from desktop_app.ui.transcript.chat_view import ChatView, MessageWidget
from desktop_app.ui.transcript.rich_text import message_html
from desktop_app.ui.transcript.text_label import TextLabel
from tests.ui.sample_answers import SECTION, code_file

# GUI-thread time for a finished answer the budget shows whole (its render, layout and paint):
# about 140 ms measured on the 2-core test machine (QLabel's own size hints took 350-500 ms);
# 2.5x the budget, for a busy machine
MAX_WHOLE_S = 0.25


def python_answer(lines: int) -> str:
    return f"Here is the module:\n\n```python\n{code_file(lines)}```\n\nThat is all.\n"


def table_answer(rows: int) -> str:
    body = "".join(f"| {i} | item {i} | {i * 3.5} |\n" for i in range(rows))
    return f"The measurements:\n\n| id | name | value |\n|---|---|---|\n{body}\nDone.\n"


def wide_line_answer() -> str:
    call = "result = compute(" + ", ".join(f"argument_{i}" for i in range(20)) + ")"
    return f"A wide line:\n\n```python\n{call}\n```\n\nAfter it, prose that wraps at the transcript's width as any paragraph does.\n"


@pytest.fixture()
def view(qtbot: Any) -> ChatView:
    view = ChatView()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    qtbot.waitExposed(view)
    shown(view, python_answer(3))  # the highlighter loaded, as in a window that showed code before
    view.clear()
    return view


def shown(view: ChatView, source: str) -> tuple[MessageWidget, float]:
    """The finished answer ``source`` added, and the GUI thread's time for it and its layout and paint."""
    start = time.thread_time()
    answer = view.add_message("assistant", source, {"generated_tokens": 1})
    QCoreApplication.sendPostedEvents()
    QCoreApplication.processEvents()
    view.viewport().repaint()
    return answer, time.thread_time() - start


def label_of(answer: MessageWidget) -> TextLabel:
    return answer.content.answer_text.label


def assert_laid_out_whole(label: TextLabel) -> None:
    """Its height is what QLabel works out for its width: no line clipped, none missing."""
    assert label.whole and label.width() > 0
    assert label.height() == QLabel.heightForWidth(label, label.width())


@pytest.mark.parametrize(("source", "shows"), [(python_answer(250), "That is all."), (table_answer(100), "item 99<")])
def test_a_250_line_code_answer_and_a_100_row_table_render_whole_within_the_budget(
    qtbot: Any, view: ChatView, source: str, shows: str
) -> None:
    answer, seconds = shown(view, source)
    text = answer.content.answer_text
    print(f"\n{source.count(chr(10))} lines: {seconds * 1000:.0f} ms of GUI time")
    assert not text.more.isVisible() and text.cut.at == len(source)  # no "Show all"
    assert shows in text.shown_html() and source.splitlines()[-1] in text.shown_html()  # its last line
    assert seconds < MAX_WHOLE_S
    assert_laid_out_whole(label_of(answer))


@pytest.mark.parametrize(
    "source", [python_answer(30), table_answer(12), wide_line_answer(), SECTION.format(n=1), "word " * 2000]
)
def test_a_finished_label_is_as_high_as_qlabel_makes_it_at_any_width(qtbot: Any, source: str) -> None:
    rendered = message_html([(source, "")], QLabel().palette(), True, None)
    label = TextLabel("measured")
    qtbot.addWidget(label)
    label.whole = True
    label.setText(rendered.html)
    label.setContentsMargins(0, 7, 0, 0)  # a seam above it, as a label in pieces has
    label.show()
    for width in (120, 333, 746, 1280, 2400):
        assert label.heightForWidth(width) == QLabel.heightForWidth(label, width), width
    plain = QLabel()
    plain.setWordWrap(True)
    plain.setTextFormat(Qt.TextFormat.RichText)
    plain.setText(rendered.html)
    plain.setContentsMargins(0, 7, 0, 0)
    if plain.minimumSizeHint().width() > 120:  # laid out at 120 px, it said what it needs
        assert label.min_width() == plain.minimumSizeHint().width()  # its widest code line or table


def test_a_code_line_wider_than_the_transcript_scrolls_it_sideways_at_any_window_size(
    qtbot: Any, view: ChatView
) -> None:
    answer, _ = shown(view, wide_line_answer())
    label = label_of(answer)
    for width, height in ((800, 600), (1280, 800), (500, 400), (2600, 800), (800, 600)):
        view.resize(width, height)
        QCoreApplication.sendPostedEvents()
        QCoreApplication.processEvents()
        wide = label.min_width() > view.viewport().width()
        assert (view.horizontalScrollBar().maximum() > 0) == wide, width  # the line scrolls, never clipped
        assert label.width() >= label.min_width()
        assert answer.width() <= max(view.viewport().width(), label.min_width() + 40)  # prose wraps as before
        assert_laid_out_whole(label)
    assert label.min_width() > 800


def test_a_finished_answer_fits_its_width_after_the_window_is_resized(qtbot: Any, view: ChatView) -> None:
    answer, _ = shown(view, SECTION.format(n=1) + python_answer(40) + table_answer(10))
    label = label_of(answer)
    for width, height in ((1280, 800), (600, 500), (1000, 700)):
        view.resize(width, height)
        QCoreApplication.sendPostedEvents()
        QCoreApplication.processEvents()
        column = min(view.viewport().width() - 16, view.widget().layout().measure())  # its margins, a readable measure
        assert answer.width() == column
        assert_laid_out_whole(label)
