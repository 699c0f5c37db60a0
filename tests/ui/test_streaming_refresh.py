"""A streaming answer in the transcript: each refresh renders and lays out only the open block at
the end, so a refresh at 4,000 tokens costs what one at 100 tokens does; what it shows while it
streams, and once it ends, is what a render of its whole text gives, spaced the same."""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable
from typing import Any

import pytest
from markdown_it import MarkdownIt
from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QGuiApplication

from desktop_app.engine_process.protocol import Piece
from desktop_app.ui.chat_view import ChatView, MessageWidget
from desktop_app.ui.rich_text import message_html
from tests.ui.sample_answers import CHARS_PER_TOKEN, SECTION, TRICKY, drafted, long_answer

TOKENS_PER_REFRESH = 8  # an answer at ~40 tok/s brings 3 tokens per refresh (80 ms); fewer refreshes, same cost


@pytest.fixture()
def view(qtbot: Any) -> ChatView:
    view = ChatView()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    view.set_streaming(True)
    return view


def streaming_answer(view: ChatView) -> MessageWidget:
    answer = view.add_message("assistant")
    answer.set_stats(None, live=True)
    return answer


def stream(qtbot: Any, answer: MessageWidget, pieces: Iterable[Piece]) -> None:
    """Each piece, then the view's render timer's refresh."""
    for text, drafter in pieces:
        answer.append(text, drafter)
        qtbot.waitUntil(lambda: not answer.dirty, timeout=5000)


class RefreshMeter:
    """Times each refresh of a message (its render, then the layout and painting it posted) and
    counts the characters of Markdown it handed to the parser."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ms: dict[MessageWidget, list[float]] = {}
        self.parsed: dict[MessageWidget, list[int]] = {}
        self._chars = 0
        parse = MarkdownIt.parse

        def counting(md: MarkdownIt, src: str, env: Any = None) -> Any:
            self._chars += len(src)
            return parse(md, src, env)

        monkeypatch.setattr(MarkdownIt, "parse", counting)
        self._monkeypatch = monkeypatch

    def watch(self, widget: MessageWidget) -> None:
        render = widget.render_text
        self.ms[widget], self.parsed[widget] = [], []

        def measured(in_pieces: bool = False) -> None:
            self._chars = 0
            start = time.perf_counter()
            render(in_pieces)
            QCoreApplication.sendPostedEvents()  # the layout and painting the refresh asked for
            self.ms[widget].append((time.perf_counter() - start) * 1000)
            self.parsed[widget].append(self._chars)

        self._monkeypatch.setattr(widget, "render_text", measured)


def test_a_refresh_at_4000_tokens_costs_what_one_at_100_tokens_does(
    qtbot: Any, view: ChatView, monkeypatch: pytest.MonkeyPatch, record_property: Any
) -> None:
    # two answers stream the same kind of text, refresh by refresh in turn (so that a busy
    # machine slows both alike): one from its start (tokens 0-290), the other after 14 sections
    # (tokens 4,060-4,350), with paragraphs, lists, code, a table, a quote, and drafts tinted
    sections = 14
    early, late = streaming_answer(view), streaming_answer(view)
    stream(qtbot, late, [(long_answer(sections), "")])
    assert len(late.text) // CHARS_PER_TOKEN > 4000
    meter = RefreshMeter(monkeypatch)
    meter.watch(early)
    meter.watch(late)
    chunk = TOKENS_PER_REFRESH * CHARS_PER_TOKEN
    for first, second in zip(drafted(SECTION.format(n=1), chunk), drafted(SECTION.format(n=sections + 1), chunk)):
        stream(qtbot, early, [first])
        stream(qtbot, late, [second])
    at_100, at_4000 = statistics.median(meter.ms[early]), statistics.median(meter.ms[late])
    record_property("refresh_ms_at_100_tokens", round(at_100, 2))
    record_property("refresh_ms_at_4000_tokens", round(at_4000, 2))
    print(f"\nrefresh at 100 tokens: {at_100:.1f} ms, at 4,000 tokens: {at_4000:.1f} ms (medians)")
    assert len(meter.ms[late]) >= 30
    # the work, counted: the Markdown parsed per refresh is the open block, never the text before it
    assert max(meter.parsed[late]) <= 2 * max(meter.parsed[early])
    assert max(meter.parsed[late]) < len(SECTION) < len(late.text) / 10
    # and timed: the refresh, with its layout, costs about the same
    assert at_4000 <= 2 * at_100, f"a refresh costs {at_4000:.1f} ms at 4,000 tokens, {at_100:.1f} ms at 100"


@pytest.mark.parametrize("name", TRICKY)
def test_a_streamed_answer_shows_what_a_render_of_its_whole_text_gives(qtbot: Any, view: ChatView, name: str) -> None:
    answer = streaming_answer(view)
    palette = answer.body.palette()
    for piece in drafted(TRICKY[name], 7):
        stream(qtbot, answer, [piece])
        shown = answer.content.answer_text.shown_html().rstrip()
        assert shown == message_html(answer.segments, palette).html, answer.text
    assert answer.content.in_pieces
    view.set_streaming(False)
    answer.set_stats({"generated_tokens": 60})
    assert not answer.content.in_pieces  # one label again: selecting across paragraphs works
    assert answer.body.text() == message_html(answer.segments, palette).html


def test_the_answer_keeps_its_height_when_it_ends(qtbot: Any, view: ChatView) -> None:
    """The labels of the blocks shown in pieces are spaced as the blocks are in one document:
    nothing jumps when the answer ends and is shown whole."""
    answer = streaming_answer(view)
    stream(qtbot, answer, drafted(long_answer(2), 40))
    text = answer.content.answer_text
    width = text.width()
    in_pieces = text.heightForWidth(width)
    view.set_streaming(False)
    answer.set_stats({"generated_tokens": 580})
    assert abs(text.heightForWidth(width) - in_pieces) <= 2


def test_a_code_blocks_copy_link_works_while_the_answer_streams(qtbot: Any, view: ChatView) -> None:
    answer = streaming_answer(view)
    stream(qtbot, answer, drafted(long_answer(2), 40))  # the first section's code block is kept
    text = answer.content.answer_text
    kept = [label for label in text.findChildren(type(answer.body)) if label is not answer.body]
    with_code = next(label for label in kept if "copy-code:0" in label.text())
    with_code.linkActivated.emit("copy-code:0")
    assert QGuiApplication.clipboard().text() == text.code_blocks[0]
    assert text.code_blocks[0].startswith("def load_settings(path: Path) -> Settings:")
    assert "Copied" in text.shown_html() and text.in_pieces


def test_a_long_open_code_block_never_takes_the_engines_core(
    qtbot: Any, view: ChatView, monkeypatch: pytest.MonkeyPatch, record_property: Any
) -> None:
    """A code block is one block until its closing fence: each refresh renders all of it. The
    transcript then refreshes less often, so that it never spends more than a small share of a
    core (on a 2-core machine the engine needs the other one)."""
    answer = streaming_answer(view)
    line = "    total = compute(items[index], scale=2.5)  # one more step of the loop\n"
    stream(qtbot, answer, [("Here is the code:\n\n```python\ndef run(items):\n" + line * 150, "")])
    meter = RefreshMeter(monkeypatch)
    meter.watch(answer)
    start = time.perf_counter()
    while time.perf_counter() - start < 3:
        answer.append(line[:30], "ngram")
        answer.append(line[30:])
        qtbot.wait(10)  # ~7 lines (~140 tokens) a second, as a fast engine writes them
    wall_ms = (time.perf_counter() - start) * 1000
    share = sum(meter.ms[answer]) / wall_ms
    record_property("refresh_share_of_a_core", round(share, 3))
    print(
        f"\n{len(meter.ms[answer])} refreshes, {share:.0%} of a core (median {statistics.median(meter.ms[answer]):.0f} ms)"
    )
    assert len(meter.ms[answer]) >= 2  # the text still moves
    assert share <= 0.3
