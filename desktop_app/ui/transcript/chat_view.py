"""The transcript: user and assistant messages (:class:`MessageWidget`), streamed and scrolled."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QWidget,
)

from desktop_app.engine.reasoning import THINK_TAGS, ReasoningFormat
from desktop_app.ui.transcript.lazy_render import LazyRender
from desktop_app.ui.transcript.message_actions import MessageActions, actions_of
from desktop_app.ui.transcript.message_widget import MessageWidget
from desktop_app.ui.transcript.readable_column import ReadableColumn
from desktop_app.ui.widgets.focus_ring import ring_on_focus

RENDER_MS = 80  # refresh a streaming message at most ~12 times a second (its open block: RichText)
# ... and keep the window's thread under this share of a core while an answer streams: on a small
# machine the engine's threads take every core, and each moment the window computes is taken from
# them (docs/window-speed.md). After a refresh, the next waits for the CPU time the window's thread
# spent since the last one (the refresh, its layout and painting, and all else: dial, footer,
# messages) over RENDER_SHARE, up to MAX_RENDER_MS; so a costly refresh (a long code block open
# at the end, a slow machine) makes the text move in bigger steps instead.
RENDER_SHARE = 0.03  # 0.95x of the CLI's decoding in the window needs it below 4% (docs/window-speed.md)
MAX_RENDER_MS = 1000
# A label's new height reaches the scroll area in a round of layout requests per level (label,
# its text, the message, the transcript, the scroll area: 5): all of them right after a refresh,
# so that no paint shows a message squeezed into its old height (lines over lines for a moment).
LAYOUT_ROUNDS = 8
# Messages made into widgets when a conversation opens, and per "show earlier" click: a message
# widget costs a few milliseconds to build and lay out (2 busy cores: 100 stalled the window
# 0.6 s, all 5000 for minutes), and 40 fill several screens.
SHOWN_AT_ONCE = 40

Record = tuple[str, str, dict[str, Any] | None]  # role, text, stats of a message not shown yet


class ChatView(QScrollArea):
    """The scrolling list of messages (objectName ``transcript``).

    Signals:
        regenerate_requested(): on the last answer.
        edit_requested(str): the last user message's text, to edit and resend.
        message_shown(MessageWidget): a message was made into a widget (it is in ``messages``).
        continue_requested(): on the last answer, to go on with it where it ended.
        edit_answer_requested(): on the last answer, to edit its text.
        branch_requested(int): a new conversation up to the message at this place in the conversation.
    """

    regenerate_requested = Signal()
    edit_requested = Signal(str)
    message_shown = Signal(object)
    continue_requested = Signal()
    edit_answer_requested = Signal()
    branch_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcript")
        self.setAccessibleName("Conversation transcript")
        self.setWidgetResizable(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        inner = QWidget()
        # Its height is its height for its width: the scroll area takes the larger of that and
        # its minimum height, which adds up each message's height at its narrowest (wrapped text
        # at its tallest); once a code line wider than the view widened it, the end of the last
        # answer sat above hundreds of px of blank space. Ignored: no minimum height.
        inner.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Ignored)
        self._layout = ReadableColumn(inner)  # a readable measure, centred in a wide window
        self._layout.setContentsMargins(8, 8, 8, 8)
        self._layout.setSpacing(8)
        self.placeholder = QLabel("Ask anything. Enter sends, Shift+Enter adds a line, Esc stops.")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self._layout.addWidget(self.placeholder)
        self.earlier_button = QPushButton()
        self.earlier_button.setObjectName("showEarlier")
        self.earlier_button.setFlat(True)
        ring_on_focus(self.earlier_button)
        self.earlier_button.clicked.connect(self.show_earlier)
        self.earlier_button.hide()
        self._layout.addWidget(self.earlier_button)
        self._layout.addStretch(1)
        self.setWidget(inner)
        self.messages: list[MessageWidget] = []  # the widgets shown, oldest first
        self._earlier: list[Record] = []  # older messages not made into widgets yet, oldest first
        self.highlight = True
        self.reasoning_format: ReasoningFormat | None = THINK_TAGS  # the loaded target's (engine/reasoning.py)
        self._follow = True
        self.streaming = False
        self.busy = False  # an answer runs or its tool calls wait: no action starts another (set_busy)
        self._cpu_mark = 0.0  # the window thread's CPU time at the last refresh (set_streaming)
        self._render_timer = QTimer(self)
        self._render_timer.setInterval(RENDER_MS)
        self._render_timer.timeout.connect(self._render_dirty)
        self.verticalScrollBar().rangeChanged.connect(self._keep_bottom)
        self.verticalScrollBar().valueChanged.connect(self.follow_reader)  # the reader scrolled: follow or not
        self.lazy = LazyRender(self, self)  # renders the messages of a conversation opened

    def clear(self) -> None:
        self.lazy.clear()
        for widget in self.messages:
            widget.setParent(None)
            widget.deleteLater()
        self.messages = []
        self._earlier = []
        self._show_earlier_button()
        self.placeholder.show()

    @property
    def earlier_count(self) -> int:
        """Older messages of the conversation not shown yet (behind "show earlier")."""
        return len(self._earlier)

    @property
    def earlier_texts(self) -> list[str]:
        """The text of each older message not shown yet, oldest first (find counts their matches)."""
        return [text for _role, text, _stats in self._earlier]

    def show_messages(self, records: Sequence[Record]) -> None:
        """Show a stored conversation: its newest SHOWN_AT_ONCE messages, the rest on request;
        rendered a slice at a time (:class:`LazyRender`), the newest now."""
        self.clear()
        cut = max(0, len(records) - SHOWN_AT_ONCE)
        self._earlier = list(records[:cut])
        shown = [self._insert(len(self.messages), role, text, stats, False) for role, text, stats in records[cut:]]
        self._show_earlier_button()
        self._follow = True
        self._update_actions()
        self.lay_out()
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())
        self.lazy.add(shown)
        self.lazy.run_slice()

    def show_earlier(self) -> None:
        """Make the next SHOWN_AT_ONCE older messages into widgets, above those shown."""
        cut = max(0, len(self._earlier) - SHOWN_AT_ONCE)
        batch, self._earlier = self._earlier[cut:], self._earlier[:cut]
        self._follow = False  # stay where the reader is, not at the newest message
        self.lazy.add([self._insert(i, role, text, stats, False) for i, (role, text, stats) in enumerate(batch)])
        self._show_earlier_button()
        self._update_actions()

    def _show_earlier_button(self) -> None:
        n = len(self._earlier)
        self.earlier_button.setText(f"Show {min(n, SHOWN_AT_ONCE)} earlier messages ({n:,} not shown)")
        self.earlier_button.setAccessibleName(f"Show earlier messages, {n} not shown")
        self.earlier_button.setVisible(n > 0)

    def _insert(
        self, index: int, role: str, text: str, stats: dict[str, Any] | None, rendered: bool = True
    ) -> MessageWidget:
        """A message widget at ``index`` among those shown (the layout holds the placeholder and
        the "show earlier" button before them); its text rendered later unless ``rendered``."""
        widget = MessageWidget(role, text, stats, self.highlight, None, self.reasoning_format, rendered)
        widget.regenerate_requested.connect(self.regenerate_requested.emit)
        widget.edit_requested.connect(lambda w=widget: self.edit_requested.emit(w.text))
        actions = MessageActions(widget)  # Continue, Edit, Branch
        actions.continue_requested.connect(self.continue_requested.emit)
        actions.edit_requested.connect(self.edit_answer_requested.emit)
        actions.branch_requested.connect(lambda w=widget: self.branch_requested.emit(self.position_of(w)))
        # before the message now at ``index`` or, appended, before the stretch (notes may sit between)
        after = self.messages[index] if index < len(self.messages) else None
        self._layout.insertWidget(
            self._layout.indexOf(after) if after is not None else self._layout.count() - 1, widget
        )
        widget.show()  # now, not when the event loop next runs: the layout that follows counts it
        self.messages.insert(index, widget)
        self.placeholder.hide()
        self.message_shown.emit(widget)
        return widget

    def add_message(self, role: str, text: str = "", stats: dict[str, Any] | None = None) -> MessageWidget:
        widget = self._insert(len(self.messages), role, text, stats)
        self._follow = True
        self._update_actions()
        return widget

    def insert_note(self, note: QWidget, above: MessageWidget) -> None:
        """Show ``note`` (e.g. where the model's context begins) just above a message shown."""
        self._layout.removeWidget(note)
        self._layout.insertWidget(self._layout.indexOf(above), note)

    def remove_last(self, role: str | None = None) -> None:
        if self.messages and (role is None or self.messages[-1].role == role):
            widget = self.messages.pop()
            widget.setParent(None)
            widget.deleteLater()
        if not self.messages and self._earlier:
            self.show_earlier()  # the last shown went: the next older ones come into view
        if not self.messages:
            self.placeholder.show()
        self._update_actions()

    def set_streaming(self, streaming: bool) -> None:
        """While streaming, a timer refreshes the messages that grew, each in pieces (only its
        open block at the end is rendered again); when it stops, each is rendered whole once."""
        self.streaming = streaming
        if streaming:
            self._cpu_mark = time.thread_time()
            self._render_timer.start(RENDER_MS)
        else:
            self._render_timer.stop()
            self._render_dirty(in_pieces=False)
        self._update_actions()

    def set_busy(self, busy: bool) -> None:
        """The conversation is busy (an answer runs, or a tool call waits for the user or runs):
        Regenerate, Edit & resend, Continue, Edit and Branch are off until it is not."""
        self.busy = busy
        self._update_actions()

    def set_highlight(self, on: bool) -> None:
        self.highlight = on
        for widget in self.messages:
            widget.set_highlight(on)

    def set_reasoning_format(self, fmt: ReasoningFormat | None) -> None:
        """The markers of the model's reasoning sections (None: it has none); the shown answers are split again."""
        self.reasoning_format = fmt
        for widget in self.messages:
            widget.set_reasoning_format(fmt)

    def _last_of_roles(self) -> list[MessageWidget]:
        found: dict[str, MessageWidget] = {}
        for widget in self.messages:
            found[widget.role] = widget
        return list(found.values())

    def _update_actions(self) -> None:
        last = self._last_of_roles()
        for widget in self.messages:
            widget.action_button.setEnabled(widget in last and not (self.streaming or self.busy))
            widget.set_reachable(widget in last)  # Tab walks these, not every message's
        self.refresh_actions()

    def refresh_actions(self) -> None:
        """Continue, Edit and Branch as the messages and their answers' ends now allow (an answer ended)."""
        last = self._last_of_roles()
        for widget in self.messages:
            actions_of(widget).refresh(widget in last, widget is self.messages[-1], self.streaming or self.busy)

    def position_of(self, widget: MessageWidget) -> int:
        """A message's place in the conversation (those not shown yet, above, counted)."""
        return self.earlier_count + self.messages.index(widget)

    def follow_reader(self) -> bool:
        """Whether the reader is at the newest message: the transcript then follows it as it grows."""
        bar = self.verticalScrollBar()
        self._follow = bar.value() >= bar.maximum() - 4
        return self._follow

    def lay_out(self) -> None:
        """Lay out what changed now, up to the scroll area (LAYOUT_ROUNDS)."""
        for _ in range(LAYOUT_ROUNDS):
            QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)

    def _render_dirty(self, in_pieces: bool = True) -> None:
        self.follow_reader()
        dirty = [w for w in self.messages if w.dirty or (w.content.in_pieces and not in_pieces)]
        for widget in dirty:
            widget.render_text(in_pieces)
        if dirty and self._render_timer.isActive():
            self.lay_out()  # its layout, counted with it
            now = time.thread_time()  # this thread's CPU time: what the window took from the engine
            spent_ms, self._cpu_mark = (now - self._cpu_mark) * 1000, now
            self._render_timer.setInterval(round(min(MAX_RENDER_MS, max(RENDER_MS, spent_ms / RENDER_SHARE))))

    def _keep_bottom(self, _min: int, maximum: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(maximum)
