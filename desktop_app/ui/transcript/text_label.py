"""The label a message's rendered text is shown in (:class:`TextLabel`), laid out as few times as
it can be (docs/window-speed.md, "What a refresh costs" and "Long text")."""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt, QTimer
from PySide6.QtGui import QFont, QShowEvent, QTextDocument, QTextOption
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

_RELAYOUT_EVENTS = frozenset({QEvent.Type.FontChange, QEvent.Type.StyleChange, QEvent.Type.LayoutDirectionChange})


def label_document(html: str, font: QFont) -> QTextDocument:
    """``html`` in a document set as a word-wrapped label's, whose layout gives the label's."""
    doc = QTextDocument()
    doc.setUndoRedoEnabled(False)
    doc.setDefaultFont(font)
    doc.setDocumentMargin(0)  # as a label's
    option = doc.defaultTextOption()
    option.setWrapMode(QTextOption.WrapMode.WordWrap)  # as a word-wrapped label's
    doc.setDefaultTextOption(option)
    doc.setHtml(html)
    return doc


class TextLabel(QLabel):
    """A label of rendered rich text: wraps, selectable, links activated (not opened) on a click.

    Qt lays a label's rich text out again for each size a layout asks of it: QLabel's size hints
    lay it out at several trial widths each time its text changes, and its height for a width
    lays it out at that width, then again at the width it had. A long answer's text was laid out
    about 11 times when it was shown. A label showing a text ``whole`` (a finished message's)
    lays it out once per width it is asked for, in a document of its own (:func:`label_document`;
    QLabel's lays it out once more, to paint it) (docs/window-speed.md, "Long text"):

    - its preferred size is its width as it is and the height for it: the width a label gets
      comes from the transcript, never from the label;
    - its minimum width is what its text was seen to need past a width it was laid out at (its
      widest code line or table): a code line wider than the transcript widens the message, and
      the transcript scrolls sideways, as before;
    - sizes asked while its window is not shown (a message being made, before it is placed) are
      not laid out: once it is shown it asks its layouts, and theirs up to the window, again.

    While it is ``streaming`` (the open block of a streaming answer) its size hints come from its
    width too, and its minimum width is 0: its text is wrapped as it is given. A kept block's
    label (a few lines, laid out once) keeps QLabel's hints. Either way, its height for a width is
    worked out once per text: while an answer streams the transcript's layouts ask every label on
    each refresh, long answers above included.
    """

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        # selectable, links clicked; not in the Tab chain (a label per message, and per block while
        # an answer streams): the keyboard reaches the last answer by its shortcuts and buttons
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.LinksAccessibleByMouse
        )
        self.setOpenExternalLinks(False)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self._heights: dict[int, int] = {}
        self._doc: QTextDocument | None = None  # its text laid out for its heights (whole)
        self._min_width = 0  # the widest its text was laid out to need past the width it had
        self._asked = 0  # the width its layout last asked its height for
        self._guessed = False  # a size was asked while its window was not shown
        self.streaming = False  # its text changes on every refresh (RichText's open block)
        self.whole = False  # it shows a finished text whole (RichText's label, not streaming)

    def _unplaced(self) -> bool:
        """Shown text whose window is not shown: not laid out (showEvent asks again)."""
        if self.whole and not self.isVisible() and not self.isHidden():
            self._guessed = True
            return True
        return False

    def _width(self) -> int:
        """The width its layout last asked its height for (before its layout places it, its
        width is Qt's default 640, which nothing shows it at), else its width."""
        return self._asked or self.width()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        if (self.streaming or self.whole) and self.width() > 0:
            return QSize(self._width(), self._height(self._width()))
        return super().sizeHint()  # a kept block's (a few lines): QLabel's, worked out once

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        if self.streaming and self.width() > 0:  # any width: its text wrapped as it is given
            return QSize(0, self._height(self.width()))
        if self.whole and self.width() > 0:
            return QSize(self.min_width(), self._height(self._width()))
        return super().minimumSizeHint()

    def min_width(self) -> int:
        """The narrowest width its text fits (its widest code line, table or word, margins
        included) as far as its layouts showed it: one at a width it overflows says it."""
        return self._min_width

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt API
        self._asked = width
        return self._height(width)

    def _height(self, width: int) -> int:
        if width not in self._heights:
            if self._unplaced():
                return 0
            if not self.whole:
                self._heights[width] = super().heightForWidth(width)
            else:  # as QLabel's: its text laid out in the width less its margins, then the margins
                margins = self.contentsMargins()
                doc = self._document()
                doc.setTextWidth(max(0, width - margins.left() - margins.right()))
                size = doc.size()
                self._heights[width] = math.ceil(size.height()) + margins.top() + margins.bottom()
                needs = math.ceil(size.width()) + margins.left() + margins.right()
                if needs > max(width, self._min_width):  # a code line or table wider: the message widens
                    self._min_width = needs
                    QTimer.singleShot(0, self, self.updateGeometry)  # once this layout is done
        return self._heights[width]

    def _document(self) -> QTextDocument:
        if self._doc is None:
            self._doc = label_document(self.text(), self.font())
            # kept while the layouts that asked for it settle (posted events run before a zero
            # timer), then let go: kept, 40 messages of 14 KB held 44 MB more (107 MB, not 63)
            QTimer.singleShot(0, self, self._let_go)
        return self._doc

    def _let_go(self) -> None:
        self._doc = None

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        if self._guessed:
            self._guessed = False
            widget: QWidget | None = self
            while widget is not None and not widget.isWindow():
                widget.updateGeometry()
                widget = widget.parentWidget()

    def _forget(self) -> None:
        self._heights = {}
        self._doc = None
        self._min_width = 0

    def setText(self, text: str) -> None:  # noqa: N802 - Qt API
        self._forget()
        super().setText(text)

    def setContentsMargins(self, *margins: Any) -> None:  # noqa: N802 - Qt API
        self._forget()
        super().setContentsMargins(*margins)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        if event.type() in _RELAYOUT_EVENTS:
            self._forget()  # its text is laid out otherwise
        super().changeEvent(event)
