"""The messages of a conversation opened, rendered a slice at a time (docs/window-speed.md,
"Opening a conversation").

Each stored message is made into a widget at once, its text not yet rendered (a message's render
and layout take up to RENDER_BUDGET_MS; 40 long ones took 2.7-3.5 s in one stretch). They are
rendered in slices of about SLICE_MS of the window's thread, on a zero timer, so that the event
loop runs between two: those in sight first (the newest when all are), then the nearest. A
message rendered above the reader's place moves what it shows down by its growth, so the reader
stays where they are; at the bottom, the transcript follows the newest message as ever.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Protocol

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QScrollBar, QWidget

from desktop_app.ui.transcript.message_widget import MessageWidget

# GUI time a slice renders messages for before the event loop runs again (at least one message,
# which may take up to RENDER_BUDGET_MS): input and painting wait at most about this long
SLICE_MS = 50


class Transcript(Protocol):
    """What the lazy rendering needs of the transcript (ChatView)."""

    messages: list[MessageWidget]

    def verticalScrollBar(self) -> QScrollBar: ...  # noqa: N802 - Qt API

    def viewport(self) -> QWidget: ...

    def follow_reader(self) -> bool:
        """Whether the reader is at the newest message (the transcript then follows it)."""
        ...

    def lay_out(self) -> None:
        """Lay out what changed now, up to the scroll area."""
        ...


class LazyRender(QObject):
    """The transcript's messages waiting for their render (:attr:`MessageWidget.pending`),
    rendered a slice at a time (module docstring)."""

    def __init__(self, view: Transcript, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._view = view
        self._waiting: list[MessageWidget] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.run_slice)

    @property
    def count(self) -> int:
        """The messages still waiting for their render."""
        self._waiting = [w for w in self._waiting if w.pending and w in self._view.messages]
        return len(self._waiting)

    def add(self, widgets: Iterable[MessageWidget]) -> None:
        self._waiting.extend(widgets)
        self._timer.start()

    def clear(self) -> None:
        self._waiting = []
        self._timer.stop()

    def run_slice(self) -> None:
        """Render waiting messages, those nearest the reader's place first, for up to SLICE_MS
        (one at least), then lay them out at once: a layout per message would lay out the whole
        transcript each time."""
        bar = self._view.verticalScrollBar()
        follow, top = self._view.follow_reader(), bar.value()
        above: list[tuple[MessageWidget, int]] = []  # rendered above the reader's place, and their heights
        start = time.thread_time()
        while self.count:
            widget = self._nearest(follow)
            if not follow and widget.y() + widget.height() <= top:
                above.append((widget, widget.height()))
            widget.render_text()
            if 2 * (time.thread_time() - start) * 1000 >= SLICE_MS:  # with their layout, about as long again
                break
        self._view.lay_out()  # their heights, now: counted in the slice
        grown = sum(widget.height() - height for widget, height in above)
        if grown:  # what the reader sees moved down by as much
            bar.setValue(bar.value() + grown)
        if self._waiting:
            self._timer.start()

    def _nearest(self, follow: bool) -> MessageWidget:
        """The waiting message nearest the part of the transcript in sight (in it: distance 0);
        of those as near, the highest (the lowest where the transcript ``follow``s the newest)."""
        top = self._view.verticalScrollBar().value()
        bottom = top + self._view.viewport().height()
        down = -1 if follow else 1

        def distance(widget: MessageWidget) -> tuple[int, int]:
            y, end = widget.y(), widget.y() + widget.height()
            return max(0, y - bottom, top - end), down * y

        return min(reversed(self._waiting), key=distance)
