"""A message's text in the transcript: the folded thinking block of an answer and the answer,
each rendered from its escaped Markdown (:class:`RichText`), with working links and
per-code-block Copy links."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel, QToolButton, QVBoxLayout, QWidget

from desktop_app.engine.reasoning import ReasoningFormat, Sections, split_reasoning
from desktop_app.engine_process.protocol import Piece
from desktop_app.ui.transcript.message_format import no_answer_note
from desktop_app.ui.transcript.rich_label import RichText
from desktop_app.ui.transcript.rich_text import pieces_between
from desktop_app.ui.widgets.focus_ring import ring_on_focus


def split_pieces(
    segments: Sequence[Piece], fmt: ReasoningFormat | None, streaming: bool
) -> tuple[Sections, list[Piece], list[Piece]]:
    """The text of ``segments`` split by :func:`split_reasoning`, and the (text, drafter) runs of
    its reasoning and of its answer."""
    text = "".join(t for t, _ in segments)
    sections = split_reasoning(text, fmt, streaming)
    if not sections.has_reasoning and sections.answer == text:
        return sections, [], list(segments)  # the common case: all answer
    reasoning: list[Piece] = []
    if sections.reasoning and fmt is not None:
        base = 0 if fmt.starts_open else text.find(fmt.start) + len(fmt.start)
        start = text.find(sections.reasoning, base)
        reasoning = pieces_between(segments, start, start + len(sections.reasoning), len(text))
    answer = pieces_between(segments, len(text) - len(sections.answer), len(text), len(text))
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
        ring_on_focus(self.toggle)
        self.toggle.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab: the last answer's only (MessageWidget)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.toggled.connect(self._fold)
        self.toggle.hide()
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        self.reasoning_text = RichText("reasoningBody")
        self.reasoning_text.set_foreground_role(QPalette.ColorRole.PlaceholderText)
        self.reasoning = self.reasoning_text.label
        self.reasoning.setAccessibleName("Reasoning")
        self.reasoning_text.hide()
        layout.addWidget(self.reasoning_text)
        self.answer_text = RichText("messageBody")
        self.answer = self.answer_text.label
        layout.addWidget(self.answer_text)
        self.note = QLabel()  # an answer that only thought: why there is no answer
        self.note.setObjectName("noAnswerNote")
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.setWordWrap(True)
        self.note.setStyleSheet("font-style: italic;")
        self.note.hide()
        layout.addWidget(self.note)
        self.sections = Sections("", "")

    @property
    def only_thought(self) -> bool:
        """The text has reasoning and no answer."""
        return self.sections.has_reasoning and not self.sections.answer.strip()

    @property
    def in_pieces(self) -> bool:
        """Shown in pieces, as while it streams (:class:`RichText`)."""
        return self.answer_text.in_pieces or self.reasoning_text.in_pieces

    def show_text(
        self,
        segments: list[Piece],
        highlight: bool,
        fmt: ReasoningFormat | None,
        streaming: bool,
        stats: dict[str, Any] | None,
        in_pieces: bool = False,
    ) -> None:
        """Render ``segments``; ``fmt`` None: all of it is the answer (a user's message);
        ``in_pieces`` while it streams (:class:`RichText`)."""
        self.sections, reasoning, answer = split_pieces(segments, fmt, streaming)
        has_reasoning = self.sections.has_reasoning
        self.toggle.setVisible(has_reasoning)
        if has_reasoning:
            self.toggle.setText(thinking_title(self.sections, streaming, stats))
            self.reasoning_text.show_pieces(reasoning, highlight, in_pieces)
        self.reasoning_text.setVisible(has_reasoning and self.toggle.isChecked())
        self.answer_text.show_pieces(answer if answer or not has_reasoning else [], highlight, in_pieces)
        self.answer_text.setVisible(bool(answer) or not has_reasoning)
        self._show_note(streaming, stats)

    def set_stats(self, streaming: bool, stats: dict[str, Any] | None) -> None:
        if self.sections.has_reasoning:
            self.toggle.setText(thinking_title(self.sections, streaming, stats))
        self._show_note(streaming, stats)

    def _show_note(self, streaming: bool, stats: dict[str, Any] | None) -> None:
        """Once an answer that only thought has ended, say why it has no answer."""
        shown = self.only_thought and not streaming
        self.note.setText(no_answer_note(stats) if shown else "")
        self.note.setVisible(shown)

    def _fold(self, opened: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if opened else Qt.ArrowType.RightArrow)
        self.reasoning_text.setVisible(opened)
