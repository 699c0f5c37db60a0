"""A message's text in the transcript: the folded thinking block of an answer and the answer,
each rendered from its escaped Markdown (:mod:`desktop_app.ui.rich_text`), with working links
and per-code-block Copy links."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from typing import Any

from PySide6.QtCore import QEvent, Qt, QTimer, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication, QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from desktop_app.engine.reasoning import ReasoningFormat, Sections, split_reasoning
from desktop_app.engine_process.protocol import Piece
from desktop_app.ui.drafter_tints import legend_html
from desktop_app.ui.markdown_html import COPY_SCHEME
from desktop_app.ui.rich_text import message_html

OPENED_SCHEMES = frozenset({"http", "https", "mailto"})  # links opened (on a click) in the system's browser
COPIED_MS = 1500  # how long a code block's Copy link reads "Copied"


def split_pieces(
    segments: Sequence[Piece], fmt: ReasoningFormat | None, streaming: bool
) -> tuple[Sections, list[Piece], list[Piece]]:
    """The text of ``segments`` split by :func:`split_reasoning`, and the (text, drafter) runs of
    its reasoning and of its answer."""
    text = "".join(t for t, _ in segments)
    sections = split_reasoning(text, fmt, streaming)
    if not sections.has_reasoning and sections.answer == text:
        return sections, [], list(segments)  # the common case: all answer
    drafters = [d for t, d in segments for _ in t]

    def runs(start: int, length: int) -> list[Piece]:
        out: list[Piece] = []
        for drafter, same in groupby(drafters[start : start + length]):
            n = len(list(same))
            out.append((text[start : start + n], drafter))
            start += n
        return out

    reasoning: list[Piece] = []
    if sections.reasoning and fmt is not None:
        base = 0 if fmt.starts_open else text.find(fmt.start) + len(fmt.start)
        reasoning = runs(text.find(sections.reasoning, base), len(sections.reasoning))
    answer = runs(len(text) - len(sections.answer), len(sections.answer))
    return sections, reasoning, answer


def thinking_title(sections: Sections, streaming: bool, stats: dict[str, Any] | None) -> str:
    """The thinking block's button: "Thinking…" while the section streams, then "Thought for 12 s"
    (stats' ``thinking_s``; "under a second") or "Thought" where it was not measured."""
    if sections.thinking and streaming:
        return "Thinking…"
    seconds = (stats or {}).get("thinking_s")
    if not isinstance(seconds, (int, float)) or seconds <= 0:
        return "Thought"
    return f"Thought for {seconds:.0f} s" if seconds >= 1 else "Thought for under a second"


class RichLabel(QLabel):
    """Rendered text that opens http(s)/mailto links in the system's browser on a click (other
    links are shown, not opened) and copies a code block on its Copy link, which reads "Copied"
    for a moment."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.setOpenExternalLinks(False)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.segments: list[Piece] = []
        self.highlight = False
        self.code_blocks: tuple[str, ...] = ()
        self.copied: int | None = None
        self._copied_timer = QTimer(self)
        self._copied_timer.setSingleShot(True)
        self._copied_timer.setInterval(COPIED_MS)
        self._copied_timer.timeout.connect(lambda: self._set_copied(None))
        self.linkActivated.connect(self.open_link)

    def show_pieces(self, segments: list[Piece], highlight: bool) -> None:
        self.segments, self.highlight = segments, highlight
        self.refresh()

    def refresh(self) -> None:
        rendered = message_html(self.segments, self.palette(), self.highlight, self.copied)
        self.code_blocks = rendered.code_blocks
        self.setText(rendered.html or " ")
        drafters = list(dict.fromkeys(d for _, d in self.segments if d)) if self.highlight else []
        tip = f"<p>Underlined text came from accepted drafts:<br>{legend_html(self.palette(), drafters)}</p>"
        self.setToolTip(tip if drafters else "")

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self.segments:
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


class MessageBody(QWidget):
    """The text of a message: for an answer with reasoning, a folded "Thought for 12 s" block
    (opens on a click) above the answer."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.toggle = QToolButton()
        self.toggle.setObjectName("thinkingToggle")
        self.toggle.setCheckable(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.toggled.connect(self._fold)
        self.toggle.hide()
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        self.reasoning = RichLabel("reasoningBody")
        self.reasoning.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.reasoning.setAccessibleName("Reasoning")
        self.reasoning.hide()
        layout.addWidget(self.reasoning)
        self.answer = RichLabel("messageBody")
        layout.addWidget(self.answer)
        self.sections = Sections("", "")

    def show_text(
        self,
        segments: list[Piece],
        highlight: bool,
        fmt: ReasoningFormat | None,
        streaming: bool,
        stats: dict[str, Any] | None,
    ) -> None:
        """Render ``segments``; ``fmt`` None: all of it is the answer (a user's message)."""
        self.sections, reasoning, answer = split_pieces(segments, fmt, streaming)
        has_reasoning = self.sections.has_reasoning
        self.toggle.setVisible(has_reasoning)
        if has_reasoning:
            self.toggle.setText(thinking_title(self.sections, streaming, stats))
            self.reasoning.show_pieces(reasoning, highlight)
        self.reasoning.setVisible(has_reasoning and self.toggle.isChecked())
        self.answer.show_pieces(answer if answer or not has_reasoning else [], highlight)
        self.answer.setVisible(bool(answer) or not has_reasoning)

    def set_stats(self, streaming: bool, stats: dict[str, Any] | None) -> None:
        if self.sections.has_reasoning:
            self.toggle.setText(thinking_title(self.sections, streaming, stats))

    def _fold(self, opened: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if opened else Qt.ArrowType.RightArrow)
        self.reasoning.setVisible(opened)
