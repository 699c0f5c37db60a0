"""One message in the transcript: its header, its text (:class:`MessageBody`), its footer of
figures and its actions (Copy, Regenerate or Edit & resend)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop_app.engine.reasoning import THINK_TAGS, ReasoningFormat, split_reasoning
from desktop_app.engine_process.protocol import Piece
from desktop_app.ui.transcript.message_body import MessageBody
from desktop_app.ui.transcript.message_format import footer_details, format_footer, tooltip_html
from desktop_app.ui.widgets.focus_ring import ring_on_focus

FRAME_PX = 1  # a message's frame (a styled panel), drawn over its layout's margin (MessageWidget)


class MessageWidget(QFrame):
    """One message. Assistant messages stream in through :meth:`append`.

    Signals:
        copy_requested(): the user clicked Copy (the text is already on the clipboard).
        regenerate_requested(): the user wants this answer again.
        edit_requested(): the user wants to edit and resend this (user) message.
    """

    copy_requested = Signal()
    regenerate_requested = Signal()
    edit_requested = Signal()

    def __init__(
        self,
        role: str,
        text: str = "",
        stats: dict[str, Any] | None = None,
        highlight: bool = True,
        parent: QWidget | None = None,
        reasoning_format: ReasoningFormat | None = THINK_TAGS,
        rendered: bool = True,
    ) -> None:
        super().__init__(parent)
        self.role = role
        self.segments: list[Piece] = [(text, "")] if text else []
        self.stats = stats
        self.highlight = highlight
        self.reasoning_format = reasoning_format if role == "assistant" else None  # a user's text is all text
        self.live = False  # streaming: a partial reasoning marker at the end is held back
        self.dirty = False
        self.pending = not rendered  # its text not rendered yet (the transcript's LazyRender will)
        self.setObjectName(f"{role}Message")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._frameless_margins()
        self.setAutoFillBackground(role == "user")
        if role == "user":
            self.setBackgroundRole(QPalette.ColorRole.AlternateBase)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10 + FRAME_PX, 6 + FRAME_PX, 10 + FRAME_PX, 6 + FRAME_PX)
        header = QLabel("You" if role == "user" else "Assistant")
        header.setStyleSheet("font-weight: bold;")
        layout.addWidget(header)
        self.content = MessageBody()  # the folded thinking block and the text
        self.body = self.content.answer
        self.body.setAccessibleName(f"{header.text()} message")
        layout.addWidget(self.content)
        row = QHBoxLayout()
        self.footer = QLabel()
        self.footer.setObjectName("messageFooter")
        self.footer.setTextFormat(Qt.TextFormat.PlainText)  # an error's text shows as written
        self.footer.setWordWrap(True)  # its sentence of drafters never widens the transcript
        self.footer.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.footer.setWordWrap(True)  # a narrow transcript wraps it, never scrolls sideways
        row.addWidget(self.footer, 1)
        if role == "user":
            row.addStretch(1)
        self.copy_button = self._action(row, "Copy", "Copy this message", self._copy)
        if role == "assistant":
            self.action_button = self._action(
                row, "Regenerate", "Generate this answer again", self.regenerate_requested.emit
            )
        else:
            self.action_button = self._action(
                row, "Edit && resend", "Edit this message and send it again", self.edit_requested.emit
            )
        layout.addLayout(row)
        self.action_row = row  # Copy and the role's action, after the footer; others add theirs here
        if rendered:
            self.render_text()
        self.set_stats(stats)

    def _frameless_margins(self) -> None:
        # QFrame makes its frame's width contents margins, which Qt's height-for-width queries
        # leave out on one path: a streaming answer's open block was laid out at two widths 2 px
        # apart on every refresh (a text layout each). The frame is drawn where it was, over the
        # layout's margin, which is FRAME_PX wider instead.
        self.setContentsMargins(0, 0, 0, 0)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        if event.type() == QEvent.Type.StyleChange:  # QFrame sets its margins again
            self._frameless_margins()

    def _action(self, row: QHBoxLayout, text: str, name: str, slot: Any) -> QPushButton:
        button = QPushButton(text)
        button.setFlat(True)
        ring_on_focus(button)  # the keyboard's place shows
        button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab reaches the last messages' only (set_reachable)
        button.setAccessibleName(name)
        button.clicked.connect(slot)
        row.addWidget(button)
        return button

    def set_reachable(self, on: bool) -> None:
        """Whether Tab reaches this message's buttons (the last answer's and your last message's
        do; a click never takes the focus from the message box, and shortcuts act on the last answer)."""
        policy = Qt.FocusPolicy.TabFocus if on else Qt.FocusPolicy.NoFocus
        for button in (self.copy_button, self.action_button, self.content.toggle):
            button.setFocusPolicy(policy)

    @property
    def text(self) -> str:
        return "".join(t for t, _ in self.segments)

    @property
    def draft_text(self) -> str:
        """The text that came from accepted drafts, whichever drafter."""
        return "".join(t for t, d in self.segments if d)

    @property
    def drafters(self) -> list[str]:
        """The drafters whose accepted tokens are in the text, in order of first appearance."""
        return list(dict.fromkeys(d for _, d in self.segments if d))

    def append(self, text: str, drafter: str = "") -> None:
        """More answer text: from ``drafter``'s accepted tokens (a DrafterKind value), or the target's ("")."""
        if self.segments and self.segments[-1][1] == drafter:
            self.segments[-1] = (self.segments[-1][0] + text, drafter)
        else:
            self.segments.append((text, drafter))
        self.dirty = True

    def set_text(self, text: str) -> None:
        self.segments = [(text, "")] if text else []
        self.dirty = True
        self.render_text()

    def set_highlight(self, on: bool) -> None:
        self.highlight = on
        self._render_again()

    def set_stats(self, stats: dict[str, Any] | None, live: bool = False) -> None:
        self.stats = stats
        if live != self.live:
            self.live = live
            self._render_again()  # a held-back partial marker shows once the answer ends
        self.content.set_stats(live, stats)
        if self.role == "assistant":
            self.footer.setText(format_footer(stats) if stats else ("generating…" if live else ""))
            self.footer.setToolTip(tooltip_html(footer_details(stats)) if stats else "")
        self.footer.setVisible(self.role == "assistant")

    def set_progress(self, done: int, total: int) -> None:
        """While the engine reads the prompt: how far it got (until the answer's figures come)."""
        if self.role == "assistant":
            self.footer.setText(f"reading your message… {done:,}/{total:,} tokens" if done < total else "generating…")

    def render_text(self, in_pieces: bool = False) -> None:
        """Markdown from the escaped text (an answer's reasoning in its folded block); with
        highlighting on, text from accepted drafts is underlined per drafter, and the body's
        tooltip names the drafters in their colours. ``in_pieces``: while the text streams, only
        its open block at the end is rendered again (:class:`RichText`)."""
        self.dirty = self.pending = False
        self.content.show_text(self.segments, self.highlight, self.reasoning_format, self.live, self.stats, in_pieces)
        thinking_only = self.content.only_thought and not self.live
        self.copy_button.setToolTip("Copy the thinking: this answer has none of its own" if thinking_only else "")

    def set_reasoning_format(self, fmt: ReasoningFormat | None) -> None:
        if self.role == "assistant":
            self.reasoning_format = fmt
            self._render_again()

    def _render_again(self) -> None:
        """Render the text again where it was rendered (one pending is rendered as it is then)."""
        if not self.pending:
            self.render_text()

    def _copy(self) -> None:
        """The text; an answer's without its reasoning (the history keeps all of it), or its
        reasoning where it has no answer (it thought until its length ran out)."""
        sections = split_reasoning(self.text, self.reasoning_format)
        QGuiApplication.clipboard().setText(sections.answer if sections.answer.strip() else sections.reasoning)
        self.copy_requested.emit()
