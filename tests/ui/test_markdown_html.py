"""The transcript's renderer on its own: Markdown from escaped text, code blocks, images, and
an answer split into its reasoning and its answer."""

from __future__ import annotations

from typing import Any

from desktop_app.engine.reasoning import THINK_TAGS, ReasoningFormat, Sections
from desktop_app.ui.transcript.markdown_html import CHROME, COPY_SCHEME, render_markdown
from desktop_app.ui.transcript.message_body import split_pieces, thinking_title


def test_raw_html_and_character_references_are_text() -> None:
    html = render_markdown("List<String> is <b>this</b>, a < b && c > d, &amp; &lt;x&gt; &#60;").html
    assert "List&lt;String&gt;" in html and "&lt;b&gt;this&lt;/b&gt;" in html
    assert "a &lt; b &amp;&amp; c &gt; d" in html
    assert "&amp;amp; &amp;lt;x&amp;gt; &amp;#60;" in html  # shown as typed, not decoded
    assert "<b>" not in html


def test_markdown_still_renders() -> None:
    html = render_markdown(
        "# Title\n\n**bold**, ~~gone~~ and `List<T>`\nnext line\n\n| a | b |\n|---|---|\n| 1 | 2 |"
    ).html
    assert "<h1>Title</h1>" in html and "<strong>bold</strong>" in html and "<s>gone</s>" in html
    assert ">List&lt;T&gt;</code>" in html and "<br" in html  # a line break is kept
    assert '<table border="1"' in html and "<td>1</td>" in html


def test_images_are_never_loaded() -> None:
    html = render_markdown(
        "![a chart](https://example.com/c.png) ![x](file:///etc/passwd) ![](http://e.com/i.png)"
    ).html
    assert "<img" not in html
    assert f'<span title="{CHROME}"' in html and '<a href="https://example.com/c.png">a chart</a>' in html
    assert "![x](file:///etc/passwd)" in html  # a file is no link target: shown as typed
    assert '<a href="http://e.com/i.png">http://e.com/i.png</a>' in html  # no alt text: the address


def test_code_blocks_are_highlighted_labelled_and_collected() -> None:
    text = "```python\ndef f(a):\n    return a < 1\n```\n\n```klingon\nx < y\n```\n\n    indented & code\n"
    rendered = render_markdown(text)
    assert rendered.code_blocks == ("def f(a):\n    return a < 1", "x < y", "indented & code")
    html = rendered.html
    assert '<span style="color: #008000; font-weight: bold">def</span>' in html  # Pygments' inline style
    assert "x &lt; y</pre>" in html  # an unknown language: plain, escaped
    assert all(f'href="{COPY_SCHEME}{i}"' in html for i in range(3))
    assert html.count(">Copy</a>") == 3 and "Copied" not in html
    assert "python</span>" in html and "klingon</span>" in html and "code</span>" in html  # the labels
    copied = render_markdown(text, copied=1).html
    assert copied.count(">Copy</a>") == 2 and f'href="{COPY_SCHEME}1" title="{CHROME}"' in copied
    assert ">Copied</a>" in copied


def test_an_answer_splits_into_reasoning_and_answer_with_their_drafters() -> None:
    pieces = [("<think>\nWhy ", ""), ("not?\n</think>\n\nBecause", "ngram"), (" so.", "")]
    sections, reasoning, answer = split_pieces(pieces, THINK_TAGS, streaming=False)
    assert sections == Sections("Why not?", "Because so.")
    assert reasoning == [("Why ", ""), ("not?", "ngram")]
    assert answer == [("Because", "ngram"), (" so.", "")]
    # a format whose section starts open; no format at all: all answer
    open_format = ReasoningFormat("open", "<think>", "</think>", starts_open=True)
    _, reasoning, answer = split_pieces([("Hmm.</think>Yes", "")], open_format, streaming=False)
    assert reasoning == [("Hmm.", "")] and answer == [("Yes", "")]
    _, reasoning, answer = split_pieces(pieces, None, streaming=False)
    assert reasoning == [] and "".join(t for t, _ in answer) == "".join(t for t, _ in pieces)
    # streaming: a partial end marker is held back
    sections, reasoning, answer = split_pieces([("<think>Still going</thi", "")], THINK_TAGS, streaming=True)
    assert sections.thinking and reasoning == [("Still going", "")] and answer == []


def test_the_thinking_blocks_title() -> None:
    thinking, done = Sections("a", "", thinking=True), Sections("a", "b")
    stats: dict[str, Any] = {"thinking_s": 12.4}
    assert thinking_title(thinking, streaming=True, stats=None) == "Thinking…"
    assert thinking_title(done, streaming=False, stats=stats) == "Thought for 12 s"
    assert thinking_title(done, streaming=False, stats={}) == "Thought"
    assert thinking_title(done, streaming=False, stats={"thinking_s": 0.3}) == "Thought for under a second"
    assert thinking_title(done, streaming=False, stats={"thinking_s": 0.0}) == "Thought"
    assert thinking_title(thinking, streaming=False, stats=None) == "Thought"  # cut off while reasoning
