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
from desktop_app.ui.transcript import markdown_html, render_budget
from desktop_app.ui.transcript.chat_view import ChatView, MessageWidget
from desktop_app.ui.transcript.rich_text import message_html
from tests.ui.sample_answers import CHARS_PER_TOKEN, SECTION, TRICKY, code_file, drafted, long_answer

TOKENS_PER_REFRESH = 8  # an answer at ~40 tok/s brings 3 tokens per refresh (80 ms); fewer refreshes, same cost
# A render budget no answer here reaches: the tests that stream thousands of tokens measure the
# rendering in pieces, which the budget's cut would otherwise stop early (tests/ui/test_long_text.py)
NO_CUT_MS = 60_000


def streaming_view(qtbot: Any) -> ChatView:
    view = ChatView()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    view.set_streaming(True)
    return view


@pytest.fixture()
def view(qtbot: Any) -> ChatView:
    return streaming_view(qtbot)


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
    counts the characters of Markdown it handed to the parser and of code it highlighted."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ms: dict[MessageWidget, list[float]] = {}
        self.parsed: dict[MessageWidget, list[int]] = {}
        self.highlighted: dict[MessageWidget, list[int]] = {}
        self._chars = self._code = 0
        parse, highlight = MarkdownIt.parse, markdown_html.highlight

        def counting(md: MarkdownIt, src: str, env: Any = None) -> Any:
            self._chars += len(src)
            return parse(md, src, env)

        def counting_code(code: str, *args: Any) -> Any:
            self._code += len(code)
            return highlight(code, *args)

        monkeypatch.setattr(MarkdownIt, "parse", counting)
        monkeypatch.setattr(markdown_html, "highlight", counting_code)
        markdown_html.highlighted_code.cache_clear()
        self._monkeypatch = monkeypatch

    def watch(self, widget: MessageWidget) -> None:
        render = widget.render_text
        self.ms[widget], self.parsed[widget], self.highlighted[widget] = [], [], []

        def measured(in_pieces: bool = False) -> None:
            self._chars = self._code = 0
            # the GUI thread's own CPU time: what the refresh costs, not the moments another
            # process had the core (a shared machine made wall-clock medians flap past 2x)
            start = time.thread_time()
            render(in_pieces)
            QCoreApplication.sendPostedEvents()  # the layout and painting the refresh asked for
            self.ms[widget].append((time.thread_time() - start) * 1000)
            self.parsed[widget].append(self._chars)
            self.highlighted[widget].append(self._code)

        self._monkeypatch.setattr(widget, "render_text", measured)


def test_a_refresh_at_4000_tokens_costs_what_one_at_100_tokens_does(
    qtbot: Any, view: ChatView, monkeypatch: pytest.MonkeyPatch, record_property: Any
) -> None:
    monkeypatch.setattr(render_budget, "RENDER_BUDGET_MS", NO_CUT_MS)
    # two answers stream the same kind of text, refresh by refresh in turn (so that a busy
    # machine slows both alike): one from its start (tokens 0-290), the other after 14 sections
    # (tokens 4,060-4,350), with paragraphs, lists, code, a table, a quote, and drafts tinted;
    # each in a transcript of its own that follows it, so that both refreshes paint their end
    sections = 14
    early, late = streaming_answer(view), streaming_answer(streaming_view(qtbot))
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
    monkeypatch.setattr(render_budget, "RENDER_BUDGET_MS", NO_CUT_MS)
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


def test_a_refresh_inside_a_long_open_code_block_costs_what_one_at_its_start_does(
    qtbot: Any, view: ChatView, monkeypatch: pytest.MonkeyPatch, record_property: Any
) -> None:
    """Small models often answer with one long code block (a whole file): it is one block until
    its closing fence, and a refresh still renders only the lines at its end. Three answers get the
    same lines, refresh by refresh in turn: one from the fence's first line (~100 tokens of code
    when measured), one 2,000 and one 4,000 tokens of code into the block."""
    monkeypatch.setattr(render_budget, "RENDER_BUDGET_MS", NO_CUT_MS)
    opening = "Here is the whole file:\n\n```python\n"
    answers = {tokens: streaming_answer(view) for tokens in (0, 2000, 4000)}
    for tokens, answer in answers.items():
        stream(qtbot, answer, [(opening + code_file(tokens * CHARS_PER_TOKEN // 38), "")])
    assert len(answers[4000].text) // CHARS_PER_TOKEN > 4000
    meter = RefreshMeter(monkeypatch)
    for answer in answers.values():
        meter.watch(answer)
    chunk = TOKENS_PER_REFRESH * CHARS_PER_TOKEN
    for piece in drafted(code_file(26), chunk):  # ~250 tokens: the first answer's median refresh is at ~120
        for answer in answers.values():
            stream(qtbot, answer, [piece])
    ms = {tokens: statistics.median(meter.ms[answer]) for tokens, answer in answers.items()}
    for tokens, median in ms.items():
        record_property(f"open_code_refresh_ms_at_{tokens}_tokens", round(median, 2))
    print(
        f"\nrefresh in an open code block at ~100 / 2,000 / 4,000 tokens: {ms[0]:.1f} / {ms[2000]:.1f} / {ms[4000]:.1f} ms"
    )
    start, end = answers[0], answers[4000]
    assert len(meter.ms[end]) >= 30
    # the work, counted: what a refresh parses and highlights is the block's last lines
    assert max(meter.parsed[end]) <= 2 * max(meter.parsed[start])
    assert max(meter.highlighted[end]) <= 2 * max(meter.highlighted[start])
    # and timed: the refresh, with its layout, costs about the same
    assert ms[4000] <= 2 * ms[0], f"a refresh costs {ms[4000]:.1f} ms at 4,000 tokens of code, {ms[0]:.1f} ms at 100"
    assert "```" not in end.body.text()  # still open
    for answer in answers.values():  # the Copy link copies the whole block so far
        assert answer.content.answer_text.code_blocks == (answer.text.removeprefix(opening).removesuffix("\n"),)


def test_a_long_open_code_block_shows_as_one_block_in_parts(qtbot: Any, view: ChatView) -> None:
    """Shown in parts of a few lines, each in its label, a long open code block looks as it does
    rendered whole (pixel for pixel: one frame, no seams), and its Copy link copies all of it."""
    answer = streaming_answer(view)
    answer.set_highlight(False)
    stream(qtbot, answer, drafted("The file:\n\n```python\n" + code_file(90), 64))
    text = answer.content.answer_text
    parts = [label for label in text.findChildren(type(answer.body)) if label is not answer.body]
    assert len(parts) > 4  # the paragraph, then parts of the code block
    with_copy = next(label for label in parts if "copy-code:0" in label.text())
    with_copy.linkActivated.emit("copy-code:0")
    assert QGuiApplication.clipboard().text() == code_file(90).removesuffix("\n")

    def laid_out() -> bool:
        width = text.width()
        label = text.label.geometry()
        return text.height() == text.heightForWidth(
            width
        ) == label.bottom() + 1 and label.height() == text.label.heightForWidth(width)

    qtbot.waitUntil(laid_out)
    in_parts = text.grab().toImage()
    view.set_streaming(False)  # the answer ends with its fence open (a length limit)
    answer.set_stats({"generated_tokens": 900})
    qtbot.waitUntil(laid_out)
    assert not text.in_pieces and "Copied" in answer.body.text()
    whole = text.grab().toImage()
    assert (in_parts.width(), in_parts.height()) == (whole.width(), whole.height())
    assert in_parts == whole


def test_each_refresh_lays_out_every_label_it_made(qtbot: Any, view: ChatView) -> None:
    """A label made for a block (or a part of a code block) is shown at once, and the layout that
    follows a refresh (timed with it) reaches the scroll area before anything paints: no frame
    shows the open block moved up over a block that is missing, or labels squeezed over each other."""
    answer = streaming_answer(view)
    text = answer.content.answer_text
    stream(qtbot, answer, [("Some text first.\n\n", "")])  # laid out once, as the window is
    source = answer.text + "```python\n" + code_file(60)
    for start in range(len(answer.text), len(source), 40):
        answer.append(source[start : start + 40])
        view._render_dirty()  # what the render timer calls
        labels = [label for label in text.labels() if not (label is text.label and label.isHidden())]
        assert not any(label.isHidden() for label in labels)
        tops = [label.geometry().top() for label in labels]
        bottoms = [label.geometry().bottom() + 1 for label in labels]
        assert tops == [0, *bottoms[:-1]], source[: start + 40]
        assert [label.height() for label in labels] == [label.heightForWidth(text.width()) for label in labels]
    assert len(text.labels()) > 4
