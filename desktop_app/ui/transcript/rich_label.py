"""Rendered Markdown in the transcript (:mod:`desktop_app.ui.transcript.rich_text`): working links, a Copy
link per code block, and text that streams in without being rendered again and again."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from PySide6.QtCore import QEvent, QTimer, QUrl
from PySide6.QtGui import QDesktopServices, QFont, QGuiApplication, QPalette, QTextDocument
from PySide6.QtWidgets import QVBoxLayout, QWidget

from desktop_app.engine_process.protocol import Piece
from desktop_app.ui.transcript.drafter_tints import legend_html
from desktop_app.ui.transcript.full_text import ShowAllLink
from desktop_app.ui.transcript.markdown_html import COPY_SCHEME, Block
from desktop_app.ui.transcript.render_budget import Cut, cut_fence_code, render_cut
from desktop_app.ui.transcript.rich_text import marked_blocks, message_html, pieces_between
from desktop_app.ui.transcript.streamed_markdown import StreamedMarkdown
from desktop_app.ui.transcript.text_label import TextLabel

OPENED_SCHEMES = frozenset({"http", "https", "mailto"})  # links opened (on a click) in the system's browser
COPIED_MS = 1500  # how long a code block's Copy link reads "Copied"
_LEADING_TAGS = re.compile(r"(?:\s*<[^>]*>)*")  # the elements a block's HTML opens with


@lru_cache(maxsize=64)
def _height(html: str, font: str) -> float:
    """The height of ``html`` laid out in ``font`` (QFont.toString()), as in a label."""
    doc = QTextDocument()
    qfont = QFont()
    qfont.fromString(font)
    doc.setDefaultFont(qfont)
    doc.setDocumentMargin(0)  # as a label's
    doc.setHtml(html)
    doc.setTextWidth(1000)
    return doc.size().height()


def seam(above: str, below: str, font: QFont) -> int:
    """The space Qt's rich text leaves between the HTML ``above`` and ``below`` in one document
    (their margins, collapsed), which two labels stacked one on the other leave out."""
    key = font.toString()
    # never below 0: an empty block (a bare "#") is as high as a line alone, and none inside a
    # document; a label cannot give that back, and the whole render mends it
    return max(0, round(_height(above + below, key) - _height(above, key) - _height(below, key)))


class RichText(QWidget):
    """Rendered Markdown (:func:`message_html`) that opens http(s)/mailto links in the system's
    browser on a click (other links are shown, not opened) and copies a code block on its Copy
    link, which reads "Copied" for a moment.

    Shown whole, in one label (``label``). While the text streams (:meth:`show_pieces` with
    ``in_pieces``), in pieces instead: each block that later text cannot change
    (:class:`StreamedMarkdown`) gets a label of its own above ``label``, rendered and laid out
    once, and ``label`` shows only the open block at the end; so a refresh costs what the end of
    the text costs, however long the text. A long code block still open at the end is shown the
    same way in parts of a few lines, each in a label of its own and ``label`` the last one,
    stacked with no space between them (their frame is drawn to look as one). The labels are
    spaced as the blocks are in one document (:func:`seam`), and the whole render that follows
    shows what a render of the whole text gives.

    Either way only the text up to its render budget's cut is rendered (:func:`render_cut`); past
    it, ``more`` links to the whole text (:class:`ShowAllLink`), and a code block cut short still
    copies all its code. Once the text streams past the cut, a refresh renders nothing again.
    """

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        # the kept blocks' labels in a widget of their own: its layout keeps their height for a
        # width until a block is added, so a refresh lays out ``label`` alone, not every block
        # above it again (hundreds of height queries a refresh at 2,000 tokens)
        self._stack = QWidget(self)
        self._layout = QVBoxLayout(self._stack)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(0)
        layout.addWidget(self._stack)
        self._stack.hide()  # until a block is kept
        self.label = TextLabel(name)
        self.label.linkActivated.connect(self.open_link)
        layout.addWidget(self.label)
        self.more = ShowAllLink(self.source, lambda: self.label.accessibleName() or "Message")
        layout.addWidget(self.more)
        self.segments: list[Piece] = []
        self.highlight = False
        self.in_pieces = False
        self._code_blocks: tuple[str, ...] = ()
        self.cut = Cut(0)  # where the last render ended
        self._streamed: tuple[str, int | None] | None = None  # the text and copied of the last refresh in pieces
        self.copied: int | None = None
        self._stream = StreamedMarkdown()
        self._kept: list[tuple[Block, TextLabel]] = []  # the stable blocks shown, each in its label
        self._parts: list[tuple[Block, TextLabel]] = []  # the parts shown of an open code block
        self._gaps: dict[tuple[int, str], int] = {}  # (kept blocks, how the open one begins) -> its seam
        self._drafters: dict[str, None] = {}  # the drafters whose text is shown, in order
        self._copied_timer = QTimer(self)
        self._copied_timer.setSingleShot(True)
        self._copied_timer.setInterval(COPIED_MS)
        self._copied_timer.timeout.connect(lambda: self._set_copied(None))

    def set_foreground_role(self, role: QPalette.ColorRole) -> None:
        for label in self.labels():
            label.setForegroundRole(role)

    def labels(self) -> list[TextLabel]:
        """The labels that show the text, top to bottom (``label`` last)."""
        return [*(label for _, label in (*self._kept, *self._parts)), self.label]

    def show_pieces(self, segments: Sequence[Piece], highlight: bool, in_pieces: bool = False) -> None:
        """Show the text of ``segments`` (text, drafter), with ``highlight`` the drafts' text
        underlined; ``in_pieces`` while it streams (class docstring)."""
        segments = list(segments)
        if (segments, highlight, in_pieces) == (self.segments, self.highlight, self.in_pieces) and segments:
            return  # shown already (an answer's end renders it more than once)
        if highlight != self.highlight:
            self._restart()  # the kept blocks' marks change
        self.segments, self.highlight, self.in_pieces = segments, highlight, in_pieces
        self.refresh()

    def source(self) -> str:
        """The whole text (Markdown) shown, or shown up to ``cut``."""
        return "".join(t for t, _ in self.segments)

    @property
    def code_blocks(self) -> tuple[str, ...]:
        """The code of each code block shown, whole (one the cut falls in too), as Copy copies it."""
        if self.cut.fence >= 0 and self._code_blocks:
            whole = cut_fence_code(self.source(), self.cut)
            if whole is not None:
                return (*self._code_blocks[:-1], whole)
        return self._code_blocks

    def shown_html(self) -> str:
        """The HTML shown, all labels' together."""
        shown = self.labels()[:-1] if self.label.isHidden() else self.labels()
        return "".join(label.text() for label in shown)

    def refresh(self) -> None:
        self.label.streaming = self.in_pieces
        self.label.whole = not self.in_pieces
        if self.in_pieces:
            self._show_in_pieces()
        else:
            self._restart()
            source = self.source()
            self.cut = render_cut(source)
            shown = pieces_between(self.segments, 0, self.cut.at, len(source))
            rendered = message_html(shown, self.palette(), self.highlight, self.copied)
            self._code_blocks = rendered.code_blocks
            self.more.show_for(source, self.cut.at < len(source))
            self.label.setContentsMargins(0, 0, 0, 0)
            self.label.setText(rendered.html or " ")
            self.label.show()
            self._drafters = dict.fromkeys(d for _, d in self.segments if d)
        drafters = list(self._drafters) if self.highlight else []
        tip = f"<p>Underlined text came from accepted drafts:<br>{legend_html(self.palette(), drafters)}</p>"
        if self.label.toolTip() != (tip if drafters else ""):
            for label in self.labels():
                label.setToolTip(tip if drafters else "")

    def _show_in_pieces(self) -> None:
        whole = self.source()
        self.cut = render_cut(whole)
        self.more.show_for(whole, self.cut.at < len(whole))
        palette, source = self.palette(), whole[: self.cut.at]
        if self._streamed == (source, self.copied):
            return  # shown already: the text grew past its cut
        self._streamed = (source, self.copied)
        split = self._stream.update(source, palette, self.copied)
        if split.restarted:
            self._drop_kept()
            self._drafters = {}
        new = split.stable[len(self._kept) :]
        if new or not split.parts or (self._parts and split.parts[0] is not self._parts[0][0]):
            self._drop(self._parts)  # the code block closed (or another began): shown whole now
        new_parts = split.parts[len(self._parts) :]
        fresh = (*new, *new_parts, *split.open)  # what this refresh renders; an earlier one showed the text before
        offset = 0 if split.restarted or not fresh else fresh[0].start
        pieces = pieces_between(self.segments, offset, len(source), len(whole))
        self._drafters.update(dict.fromkeys(d for _, d in pieces if d))
        htmls = marked_blocks(fresh, pieces, palette, self.highlight, offset)
        for block, html in zip(new, htmls, strict=False):
            self._keep(block, html, self._kept)
        for block, html in zip(new_parts, htmls[len(new) :], strict=False):
            self._keep(block, html, self._parts)
        self._code_blocks = split.code_blocks
        html = "".join(htmls[len(new) + len(new_parts) :]).rstrip()
        gap = 0
        if self._kept and split.open and not self._parts:
            begins = _LEADING_TAGS.match(split.open[0].html)
            key = (len(self._kept), begins.group(0) if begins else "")
            if key not in self._gaps:
                self._gaps[key] = seam(self._kept[-1][0].html, split.open[0].html, self.font())
            gap = self._gaps[key]
        self.label.setContentsMargins(0, gap, 0, 0)
        self.label.setText(html or " ")
        self.label.setVisible(bool(html) or not self._kept)  # all of it stable (a code block just closed)

    def _keep(self, block: Block, html: str, into: list[tuple[Block, TextLabel]]) -> None:
        """Show ``block`` in a label of its own, after those ``into`` holds (``_kept`` or ``_parts``)."""
        label = TextLabel(f"{self.label.objectName()}Block")
        label.setForegroundRole(self.label.foregroundRole())
        label.setToolTip(self.label.toolTip())
        label.linkActivated.connect(self.open_link)
        gap = 0  # between parts of a code block: none
        if self._kept and (into is self._kept or not self._parts):
            gap = seam(self._kept[-1][0].html, block.html, self.font())
        label.setContentsMargins(0, gap, 0, 0)
        label.setText(html)
        self._layout.insertWidget(len(self._kept) + len(self._parts), label)
        label.show()  # now, not when the event loop next runs: the layout that follows counts it
        into.append((block, label))
        self._stack.show()

    def _drop(self, shown: list[tuple[Block, TextLabel]]) -> None:
        for _, label in shown:
            self._layout.removeWidget(label)
            label.hide()
            label.deleteLater()
        shown.clear()
        self._stack.setVisible(bool(self._kept or self._parts))  # empty, its old size would still count

    def _drop_kept(self) -> None:
        self._drop(self._parts)
        self._drop(self._kept)
        self._gaps = {}

    def _restart(self) -> None:
        """Show the next refresh in pieces from scratch."""
        self._drop_kept()
        self._stream = StreamedMarkdown()
        self._streamed = None

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange) and self.segments:
            self._restart()
            self.refresh()  # code colours and tints follow a light/dark theme switch

    def open_link(self, href: str) -> None:
        if href.startswith(COPY_SCHEME):
            index = int(href.removeprefix(COPY_SCHEME) or -1)
            if 0 <= index < len(self.code_blocks):
                QGuiApplication.clipboard().setText(self.code_blocks[index])
                self._set_copied(index)
                self._copied_timer.start()
        elif QUrl(href).scheme().lower() in OPENED_SCHEMES:
            QDesktopServices.openUrl(QUrl(href))

    def _set_copied(self, index: int | None) -> None:
        self.copied = index
        self.refresh()
