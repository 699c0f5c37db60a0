"""Text is text: what users see in the transcript of the real window is what was typed or
answered (no HTML read from it, no resource loaded for it), code blocks are framed with a
Copy link, and an answer's reasoning is folded away."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, QPointF, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QGuiApplication, QTextDocument
from PySide6.QtWidgets import QLabel

from desktop_app.engine.reasoning import THINK_TAGS, split_reasoning
from desktop_app.ui.conversations.conversation_list import TITLE_ROLE
from desktop_app.ui.transcript.chat_view import ChatView, MessageWidget
from desktop_app.ui.transcript.drafter_tints import drafter_tint
from desktop_app.ui.transcript.message_body import thinking_title
from desktop_app.ui.transcript.rich_label import COPIED_MS, RichText
from tests.ui.helpers import last_answer, send_and_wait

QUESTION = "In Java, what does List<String> mean? And is <b>this</b> bold? a < b && c > d"
ANSWER = (
    "In Java, a `List<String>` is a list of strings: List<String> holds text. "
    "Here <b>this</b> is not bold, and a < b && c > d is a comparison; &amp; stays as typed.\n\n"
    "```python\ndef smaller(a, b):\n    return a < b && b > 0\n```\n"
)
LITERAL = ("List<String>", "<b>this</b>", "a < b && c > d")


class ResourceLog(QTextDocument):
    """A document that notes every resource (image, stylesheet) its content asks for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def loadResource(self, kind: int, name: QUrl) -> Any:  # noqa: N802 - Qt API
        self.asked.append(name.toString())
        return super().loadResource(kind, name)


class UrlLog(QObject):
    """Stands in for the system's browser: the URLs QDesktopServices.openUrl was given."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url.toString())


def shown(label: QLabel | RichText) -> str:
    """What a rich-text label (or all the labels of a text shown in pieces) shows, as plain text."""
    doc = QTextDocument()
    doc.setHtml(label.shown_html() if isinstance(label, RichText) else label.text())
    return doc.toPlainText()


def link_point(label: QLabel, href: str) -> QPointF:
    """Where ``label`` draws the link to ``href`` (its first character), in label coordinates."""
    doc = QTextDocument()
    doc.setDefaultFont(label.font())
    doc.setDocumentMargin(0)
    doc.setHtml(label.text())
    doc.setTextWidth(label.contentsRect().width())
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.charFormat().anchorHref() == href:
                origin = doc.documentLayout().blockBoundingRect(block).topLeft()  # lays the block out
                line = block.layout().lineForTextPosition(fragment.position() - block.position())
                assert line.isValid()
                x = line.cursorToX(fragment.position() - block.position())[0]
                return QPointF(origin.x() + x + 3, origin.y() + line.y() + line.height() / 2)
            it += 1
        block = block.next()
    raise AssertionError(f"no link to {href} in {label.text()}")


def click_link(qtbot: Any, label: QLabel, href: str) -> None:
    qtbot.mouseClick(label, Qt.MouseButton.LeftButton, pos=link_point(label, href).toPoint())


def stream(qtbot: Any, view: ChatView, *pieces: str | tuple[str, str]) -> MessageWidget:
    """Stream a new answer, as the chat session does: each piece's text (from the drafter
    given with it) in small parts, then its end."""
    answer = view.add_message("assistant")
    answer.set_stats(None, live=True)
    view.set_streaming(True)
    for piece in pieces:
        text, drafter = (piece, "") if isinstance(piece, str) else piece
        for start in range(0, len(text), 7):
            answer.append(text[start : start + 7], drafter)
            qtbot.wait(2)
    qtbot.waitUntil(lambda: not answer.dirty)  # the render timer showed the last part
    view.set_streaming(False)
    answer.set_stats({"generated_tokens": 1})
    return answer


def test_angle_brackets_and_ampersands_show_as_typed_streamed_and_reloaded(
    qtbot: Any, make_window: Any, models: Any
) -> None:
    window = make_window(target_path=models.target, drafter="ngram", spec_mode="on", max_tokens=40)
    send_and_wait(qtbot, window, QUESTION)
    question = window.chat_view.messages[0]
    for part in LITERAL:
        assert part in shown(question.body), part
    # the answer as it streams (half of it, then all of it), with draft marks on
    view = window.chat_view
    answer = view.add_message("assistant")
    answer.set_stats(None, live=True)
    view.set_streaming(True)
    answer.append(ANSWER[:90], "ngram")
    qtbot.waitUntil(lambda: "List<String> holds" in shown(answer.content.answer_text))
    answer.append(ANSWER[90:])
    qtbot.waitUntil(lambda: "&amp; stays" in shown(answer.content.answer_text))
    view.set_streaming(False)  # shown whole again
    text = shown(answer.body)
    for part in (*LITERAL, "&amp; stays as typed", "return a < b && b > 0"):
        assert part in text, part
    # reopened from the history
    conversation = window.session.conversation_id
    window.history.add_message(conversation, "assistant", ANSWER, {"generated_tokens": 60})
    window.session.open(None)
    window.session.open(conversation)
    reloaded = window.chat_view.messages
    assert [m.role for m in reloaded] == ["user", "assistant", "assistant"]
    for part in LITERAL:
        assert part in shown(reloaded[0].body) and part in shown(reloaded[2].body), part
    # the conversation's tooltip shows its title as typed
    title = window.conversations.list.item(0).data(TITLE_ROLE)
    assert "<b" in title and shown(QLabel(window.conversations.list.item(0).toolTip())).startswith(title)


def test_an_answer_loads_no_image_or_file_and_opens_links_only_on_a_click(qtbot: Any, make_window: Any) -> None:
    window = make_window()
    browser = UrlLog()
    for scheme in ("https", "file"):
        QDesktopServices.setUrlHandler(scheme, browser, "open")
    try:
        answer = stream(
            qtbot,
            window.chat_view,
            'Look: <img src="file:///etc/passwd"> and ![x](file:///etc/passwd) and '
            "![a chart](https://example.com/chart.png), [the docs](https://example.com/docs), "
            "[a file](file:///etc/passwd).",
        )
        html = answer.body.text()
        assert "<img" not in html.lower()
        doc = ResourceLog()
        doc.setHtml(html)
        doc.setTextWidth(400)
        assert doc.size().height() > 0 and doc.asked == []  # laid out, nothing fetched
        text = shown(answer.body)
        assert '<img src="file:///etc/passwd">' in text and "![x](file:///etc/passwd)" in text
        assert "Image: a chart" in text and "[a file](file:///etc/passwd)" in text
        assert browser.opened == []  # nothing opens by itself
        click_link(qtbot, answer.body, "https://example.com/chart.png")
        click_link(qtbot, answer.body, "https://example.com/docs")
        assert browser.opened == ["https://example.com/chart.png", "https://example.com/docs"]
        answer.body.linkActivated.emit("file:///etc/passwd")  # as a link, it would still not open
        assert browser.opened == ["https://example.com/chart.png", "https://example.com/docs"]
    finally:
        for scheme in ("https", "file"):
            QDesktopServices.unsetUrlHandler(scheme)


def test_code_blocks_are_framed_highlighted_and_each_copies_its_own_code(qtbot: Any, make_window: Any) -> None:
    window = make_window()
    first = "def smaller(a, b):\n    return a < b"
    second = "SELECT * FROM t WHERE a < 3 && b > 1;"
    answer = stream(
        qtbot,
        window.chat_view,
        f"Use `List<T>` here.\n\n```python\n{first}\n```\n\nand\n\n```no-such-language\n{second}\n```\n",
    )
    html = answer.body.text()
    text = shown(answer.body)
    assert "python" in text and "no-such-language" in text  # each block's language label
    assert text.count("Copy") == 2 and first in text and second in text
    assert "border" in html and "background-color" in html  # framed, on a background
    doc = QTextDocument()
    doc.setHtml(html)
    keyword = doc.find("def")  # Pygments coloured the keyword; the unknown language stays plain
    plain = doc.find("SELECT")
    assert keyword.charFormat().foreground().color() != plain.charFormat().foreground().color()
    inline = doc.find("List<T>").charFormat()
    assert inline.fontFixedPitch() or "monospace" in inline.fontFamilies()

    def links() -> list[str]:
        return [line for line in shown(answer.body).splitlines() if line.startswith("Cop")]

    QGuiApplication.clipboard().clear()
    click_link(qtbot, answer.body, "copy-code:1")
    assert QGuiApplication.clipboard().text() == second
    assert links() == ["Copy", "Copied"]  # the second block's link says it worked ...
    qtbot.waitUntil(lambda: links() == ["Copy", "Copy"], timeout=COPIED_MS * 3)  # ... for a moment
    click_link(qtbot, answer.body, "copy-code:0")
    assert QGuiApplication.clipboard().text() == first


def test_the_thinking_block_is_folded_and_opens_on_a_click(qtbot: Any, make_window: Any, models: Any) -> None:
    # a thinking model's real answer: its template opens the section, all 6 tokens are reasoning
    window = make_window(target_path=models.thinking, drafter="none", max_tokens=6)
    view = window.chat_view
    assert view.reasoning_format == THINK_TAGS
    done = send_and_wait(qtbot, window, "Why?")
    assert done.text.startswith("<think>\n")
    real = last_answer(window)
    toggle, reasoning = real.content.toggle, real.content.reasoning
    assert toggle.isVisible() and not reasoning.isVisible()
    assert toggle.text() == thinking_title(real.content.sections, False, done.stats.to_dict()) != "Thinking…"
    assert not real.body.isVisible()  # no answer after the reasoning
    qtbot.mouseClick(toggle, Qt.MouseButton.LeftButton)
    assert reasoning.isVisible() and shown(reasoning) == split_reasoning(done.text, THINK_TAGS).reasoning
    # an answer that thinks, then answers, streamed as the chat session does
    answer = view.add_message("assistant")
    answer.set_stats(None, live=True)
    view.set_streaming(True)
    answer.append("<think>\nList<String> is generic, so ")
    qtbot.waitUntil(lambda: not answer.dirty)
    toggle, reasoning = answer.content.toggle, answer.content.reasoning
    assert toggle.isVisible() and toggle.text() == "Thinking…" and not reasoning.isVisible()
    assert not answer.body.isVisible()  # no answer yet
    answer.append("I explain it.\n</think>\n\nIt is a list of strings.")
    qtbot.waitUntil(lambda: not answer.dirty)
    view.set_streaming(False)
    answer.set_stats({"generated_tokens": 30, "thinking_s": 12.4})
    assert toggle.text() == "Thought for 12 s" and not reasoning.isVisible()
    assert shown(answer.body) == "It is a list of strings."
    qtbot.mouseClick(toggle, Qt.MouseButton.LeftButton)
    assert reasoning.isVisible() and shown(reasoning) == "List<String> is generic, so I explain it."
    qtbot.mouseClick(toggle, Qt.MouseButton.LeftButton)
    assert not reasoning.isVisible()
    # Copy copies the answer; the history keeps the whole text
    qtbot.mouseClick(answer.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == "It is a list of strings."
    assert answer.text.startswith("<think>")
    # a stored answer without a measured time; a model without reasoning markers shows it all
    view.show_messages([("assistant", answer.text, {"generated_tokens": 30})])
    stored = view.messages[0]
    assert stored.content.toggle.text() == "Thought" and not stored.content.reasoning.isVisible()
    view.set_reasoning_format(None)
    assert not stored.content.toggle.isVisible() and shown(stored.body).startswith("<think>")


def test_drafted_code_is_underlined_in_the_drafters_colour_not_tinted(qtbot: Any, make_window: Any) -> None:
    window = make_window(highlight_drafts=True)
    code = ("```python\nx = [1, 2, 3]\nprint(x)\n```\n", "ngram")
    answer = stream(qtbot, window.chat_view, "Plain words.\n\n", code)
    doc = QTextDocument()
    doc.setHtml(answer.body.text())
    colour = drafter_tint("ngram", answer.palette())
    for word in ("print", "[1, 2, 3]"):
        drafted = doc.find(word).charFormat()
        assert drafted.fontUnderline() and drafted.underlineColor().name() == colour.name(), word
        assert drafted.background().style() == Qt.BrushStyle.NoBrush  # the code keeps its frame's background
    assert not doc.find("words").charFormat().fontUnderline()
    assert not doc.find("python").charFormat().fontUnderline()  # the language label is not the answer's text
    assert "Repeats from this chat" in answer.body.toolTip()
    window.side.highlight.setChecked(False)
    doc.setHtml(answer.body.text())
    assert not doc.find("print").charFormat().fontUnderline()
