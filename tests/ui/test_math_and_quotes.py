"""LaTeX math drawn offline in the transcript, code spans that look like code in a table cell as
in a paragraph, and block quotes with a bar: what a finished answer shows in the window's
transcript (issue 49, item 11 and LaTeX)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QBrush, QFontMetrics, QTextCharFormat, QTextCursor, QTextDocument, QTextTableCell

from desktop_app.ui.transcript.chat_view import ChatView, MessageWidget
from desktop_app.ui.transcript.latex_math import MATH_TITLE, formula_image
from desktop_app.ui.transcript.rich_text import message_html

MATH = (
    "Euler: $e^{i\\pi} + 1 = 0$ and \\(a^2 + b^2 = c^2\\); it costs $5 and $10.\n\n"
    "$$\\int_0^1 x^2\\,dx = \\frac{1}{3}$$\n\n"
    "\\[\n\\sum_{n=1}^\\infty \\frac{1}{n^2} = \\frac{\\pi^2}{6}\n\\]\n\n"
    "In code `$x^2$` stays; a broken $\\frac{a}$ shows its source.\n\n"
    "```\n$$y^2$$\n```\n"
)
TABLE_AND_QUOTE = (
    "A span `print(x)` here.\n\n| name | code |\n|---|---|\n| first | `print(x)` |\n\n> quoted text\n> line two\n"
)


@pytest.fixture()
def view(qtbot: Any) -> ChatView:
    view = ChatView()
    qtbot.addWidget(view)
    view.resize(800, 700)
    view.show()
    qtbot.waitExposed(view)
    return view


def answer(view: ChatView, text: str) -> tuple[MessageWidget, QTextDocument]:
    """The finished answer ``text`` in the transcript, and a document of what its label shows."""
    message = view.add_message("assistant", text, {"generated_tokens": 1})
    QCoreApplication.sendPostedEvents()
    QCoreApplication.processEvents()
    doc = QTextDocument()
    doc.setDefaultFont(message.content.answer_text.label.font())
    doc.setHtml(message.content.answer_text.shown_html())
    return message, doc


def images(doc: QTextDocument) -> list[str]:
    """The alt text of each formula drawn in ``doc``."""
    found = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isImageFormat() and fmt.toolTip() == MATH_TITLE:
                assert fmt.toImageFormat().name().startswith("data:image/png;base64,")
                found.append(fmt.toImageFormat().name())
            it += 1
        block = block.next()
    return found


def format_at(doc: QTextDocument, text: str, nth: int = 0) -> QTextCharFormat:
    plain = doc.toPlainText()
    at = -1
    for _ in range(nth + 1):
        at = plain.index(text, at + 1)
    cursor = QTextCursor(doc)
    cursor.setPosition(at + 1)
    return cursor.charFormat()


def test_inline_and_display_math_are_drawn_code_and_dollars_stay_text(view: ChatView) -> None:
    message, doc = answer(view, MATH)
    assert len(images(doc)) == 4  # two inline, two display
    shown = doc.toPlainText()
    assert "e^{i\\pi}" not in shown and "\\int_0^1" not in shown and "\\sum_" not in shown
    assert "it costs $5 and $10." in shown  # money is not math
    assert "`" not in shown and "$x^2$" in shown and "$$y^2$$" in shown  # code stays code
    assert "$\\frac{a}$" in shown  # a formula that does not parse: its source
    assert formula_image("\\frac{a}") is None
    assert formula_image("x+" * 400 + "y") is None  # too long to draw on the window's thread: its source
    assert formula_image("x^2") is formula_image("x^2")  # cached
    if os.environ.get("SPECCHAT_SHOTS"):
        view.grab().save(os.path.join(os.environ["SPECCHAT_SHOTS"], "math.png"))


def test_a_code_span_in_a_table_cell_looks_as_in_a_paragraph(view: ChatView) -> None:
    _message, doc = answer(view, TABLE_AND_QUOTE)
    in_text, in_cell = format_at(doc, "print(x)"), format_at(doc, "print(x)", 1)
    for fmt in (in_text, in_cell):
        metrics = QFontMetrics(fmt.font())
        assert metrics.horizontalAdvance("iiii") == metrics.horizontalAdvance("MMMM")  # fixed pitch
        assert fmt.background().style() != QBrush().style()  # shaded as code
    assert in_cell.fontFamilies() == in_text.fontFamilies()
    assert in_cell.background().color() == in_text.background().color()


def test_a_block_quote_has_a_bar(view: ChatView) -> None:
    _message, doc = answer(view, TABLE_AND_QUOTE)
    cursor = QTextCursor(doc)
    cursor.setPosition(doc.toPlainText().index("quoted text") + 1)
    table = cursor.currentTable()
    assert table is not None, "a quote is a table: a bar cell, then the text"
    bar: QTextTableCell = table.cellAt(0, 0)
    assert bar.format().background().style() != QBrush().style()
    assert table.cellAt(cursor).column() == 1
    if os.environ.get("SPECCHAT_SHOTS"):
        view.grab().save(os.path.join(os.environ["SPECCHAT_SHOTS"], "quote.png"))


def test_draft_tints_go_on_after_a_formula(qtbot: Any, view: ChatView) -> None:
    text = "Euler: $e^{i\\pi}+1=0$ done, and more text here."
    html = message_html([(text[:10], ""), (text[10:], "ngram")], view.palette()).html
    doc = QTextDocument()
    doc.setHtml(html)
    assert len(images(doc)) == 1
    assert format_at(doc, "more text").fontUnderline()  # the drafted text after the formula is marked
