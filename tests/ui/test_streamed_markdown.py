"""A growing message rendered block by block: every update shows what a render of the whole text
so far gives, and an update parses only the open end of the text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_app.ui.transcript.markdown_html import render_markdown
from desktop_app.ui.transcript.streamed_markdown import StreamedMarkdown
from tests.ui.sample_answers import CHARS_PER_TOKEN, SECTION, TRICKY, long_answer


def assert_streams_as_rendered_whole(text: str, cuts: list[int]) -> None:
    stream = StreamedMarkdown()
    for end in [*cuts, len(text)]:
        split = stream.update(text[:end])
        whole = render_markdown(text[:end])
        assert "".join(b.html for b in (*split.stable, *split.open)).rstrip() == whole.html, text[:end]
        assert split.code_blocks == whole.code_blocks


@pytest.mark.parametrize("name", TRICKY)
@pytest.mark.parametrize("size", [1, 3, 8])
def test_each_update_is_what_a_render_of_the_whole_text_gives(name: str, size: int) -> None:
    text = TRICKY[name]
    assert_streams_as_rendered_whole(text, list(range(0, len(text), size)))


LINES = [
    "",
    "text",
    "more text with *stars",
    "# heading",
    "#",
    "===",
    "---",
    "- item",
    "-",
    "1. first",
    "2",
    "2. second",
    "   continued",
    "    indented",
    "> quote",
    "```",
    "```py",
    "~~~",
    "| a | b |",
    "|---|---|",
    "[ref]: https://example.com/r",
    "see [ref]",
    "***",
]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=14), st.lists(st.integers(1, 9), min_size=1, max_size=6))
def test_any_text_streams_as_it_renders_whole(lines: list[str], steps: list[int]) -> None:
    text = "\n".join(lines)
    cuts, at, i = [], 0, 0
    while at < len(text):
        cuts.append(at)
        at, i = at + steps[i % len(steps)], i + 1
    assert_streams_as_rendered_whole(text, cuts)


def test_an_update_parses_the_open_end_not_the_whole_text() -> None:
    text = long_answer(14)  # about 4,000 tokens
    stream = StreamedMarkdown()
    parsed = {}
    for end in range(0, len(text), 4 * CHARS_PER_TOKEN):
        stream.update(text[:end])
        parsed[end] = stream.parsed_chars
    early = max(n for end, n in parsed.items() if end < len(SECTION))
    late = max(n for end, n in parsed.items() if end > len(text) - len(SECTION))
    assert early <= len(SECTION) and late <= len(SECTION)  # a block at most, never the text before it
    assert late <= 2 * early


CODE_LINES = ["x = 1", "", "    indented", "``", "```not closing", "~~~", "  # comment", '"""doc', "\t tab"]
CODE_LINES += ["    ```", "~~~~~ \t"]  # code in a ``` fence; closes a ~~~~ one


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(["```python\n", "  ```\n", "~~~~ js\n"]),
    st.lists(st.sampled_from(CODE_LINES), min_size=8, max_size=30),
    st.booleans(),
    st.integers(1, 9),
)
def test_a_long_open_code_block_streams_in_parts(opener: str, lines: list[str], close: bool, step: int) -> None:
    """While a long fence is open, an update renders its last part: the parts tile the block's
    text, the Copy link's code is the whole block's, and once it closes the block is rendered whole."""
    closing = opener.strip()[:3] if opener.strip()[0] == "`" else "~~~~"
    text = "Intro.\n\n" + opener + "\n".join(lines) + "\n" + (closing + "\n\nAfter.\n" if close else "")
    stream = StreamedMarkdown(part_lines=3)
    in_parts = fence_like = False
    for end in [*range(0, len(text), step), len(text)]:
        split = stream.update(text[:end])
        whole = render_markdown(text[:end])
        assert split.code_blocks == whole.code_blocks, text[:end]
        if split.parts:
            blocks = (*split.parts, *split.open)
            assert "".join(b.source for b in blocks) == text[blocks[0].start : end]
            assert all(b.start + len(b.source) == n.start for b, n in zip(blocks, blocks[1:], strict=False))
            if in_parts and not fence_like:  # the last part, not the whole block
                assert stream.parsed_chars <= len(opener) + 6 * 20
            in_parts = True
        else:
            assert "".join(b.html for b in (*split.stable, *split.open)).rstrip() == whole.html, text[:end]
        # a line that may close the fence hands the block to a whole render (then parts again)
        fence_like = (
            bool(re.match(r" {0,3}(```|~~~)", text[:end].rsplit("\n", 1)[-1])) or fence_like and not split.parts
        )
