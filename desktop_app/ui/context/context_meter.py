"""The context meter under the message box: "1,234 / 4,096 tokens" and a thin bar, amber when
the context is nearly full, red when the conversation no longer fits; a one-click "Raise the
context to N" when the model allows it; the overflow policy in its context menu.

It only shows what it is given (:class:`~desktop_app.ui.context.context_watch.ContextWatch` counts)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, Signal
from PySide6.QtGui import QAction, QActionGroup, QColor
from PySide6.QtWidgets import QHBoxLayout, QMenu, QProgressBar, QPushButton, QSizePolicy, QWidget

from desktop_app.engine.api import OverflowPolicy
from desktop_app.engine.context_size import PromptSize, RaiseOffer
from desktop_app.ui.transcript.drafter_tints import is_dark
from desktop_app.ui.widgets.plain_text import plain_label, plain_tip

NEAR_SHARE = 0.8  # amber from this share of the prompt's room on
LEVEL_COLOURS = {"near": QColor(214, 137, 16), "over": QColor(198, 40, 40)}  # amber, red
DARK_LEVEL_COLOURS = {"near": QColor(240, 170, 60), "over": QColor(255, 120, 110)}  # lighter: readable on a dark theme


def level_of(size: PromptSize) -> str:
    """ "ok", "near" (amber) or "over" (red: messages are left out, or the last one is too long)."""
    if size.over:
        return "over"
    return "near" if size.tokens >= NEAR_SHARE * size.limit else "ok"


def left_out(count: int) -> str:
    """How many of the oldest messages are left out, in words."""
    return "The oldest message is" if count == 1 else f"The {count:,} oldest messages are"


def raise_text(offer: RaiseOffer) -> str:
    return f"Raise the context to {offer.n_ctx:,}"


class ContextMeter(QWidget):
    """Signals:
    policy_chosen(str): the user chose an OverflowPolicy value in the context menu.
    raise_requested(int): the user clicked "Raise the context to N": N.
    """

    policy_chosen = Signal(str)
    raise_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contextMeter")
        self.setAccessibleName("Context used")
        self.level = "ok"
        self.prompt_size: PromptSize | None = None
        self.offer: RaiseOffer | None = None
        self.policy = OverflowPolicy.DROP_OLDEST
        row = QHBoxLayout(self)
        row.setContentsMargins(2, 0, 2, 0)
        self.label = plain_label()
        self.label.setObjectName("contextMeterLabel")
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # never widens the window
        self.label.setWordWrap(True)  # a narrow or scaled window wraps it ("· 7 oldest left out"), never cuts it
        self.bar = QProgressBar()
        self.bar.setObjectName("contextMeterBar")
        self.bar.setTextVisible(False)
        self.bar.setFixedSize(120, 6)
        self.raise_button = QPushButton()
        self.raise_button.setObjectName("raiseContext")
        self.raise_button.setFlat(True)
        self.raise_button.hide()
        self.raise_button.clicked.connect(self._raise)
        row.addWidget(self.bar)
        row.addWidget(self.label, 1)
        row.addWidget(self.raise_button)
        self.setContextMenuPolicy(self.contextMenuPolicy().CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)

    def show_size(self, size: PromptSize | None, why_not: str = "") -> None:
        """The next prompt's size (None: not known now, ``why_not`` says why)."""
        self.prompt_size = size
        if size is None:
            self.level = "ok"
            self.label.setText("– tokens")
            self.bar.setValue(0)
            self._paint()
            self.setToolTip(plain_tip(why_not) or "The context's use is counted once a model is loaded")
            return
        self.level = level_of(size)
        text = f"{size.tokens:,} / {size.n_ctx:,} tokens"
        if size.over and self.policy is OverflowPolicy.REFUSE:
            text += " · too long: the model will refuse"
        elif size.dropped:
            text += f" · {size.dropped:,} oldest left out"
        self.label.setText(text)
        self.bar.setRange(0, max(size.n_ctx, 1))
        self.bar.setValue(min(size.tokens, size.n_ctx))
        self._paint()
        self.setToolTip(plain_tip(self._explain(size)))
        self._show_offer()

    def show_offer(self, offer: RaiseOffer | None) -> None:
        """A larger context this machine can hold (None: none); the button shows when the
        context is nearly full or over."""
        self.offer = offer
        self._show_offer()

    def set_policy(self, policy: OverflowPolicy) -> None:
        self.policy = policy
        if self.prompt_size is not None:
            self.show_size(self.prompt_size)

    def _show_offer(self) -> None:
        if self.offer is not None:
            self.raise_button.setText(raise_text(self.offer))
            self.raise_button.setToolTip(plain_tip(self.offer.explanation))
            self.raise_button.setAccessibleName(raise_text(self.offer))
        self.raise_button.setVisible(self.offer is not None and self.level != "ok")

    def _explain(self, size: PromptSize) -> str:
        lines = [
            f"The next prompt takes {size.tokens:,} of the model's {size.n_ctx:,} tokens of context "
            f"(the conversation, any system prompt and what you are typing; "
            f"{size.n_ctx - size.limit:,} are kept for the answer)."
        ]
        if size.dropped:
            lines.append(f"{left_out(size.dropped)} left out to make it fit.")
        elif size.tokens > size.limit:
            lines.append("Your message alone is too long for this context.")
        lines.append("Right-click to choose what happens when a conversation outgrows the context.")
        return "\n".join(lines)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._paint()  # a light or dark theme: its own amber and red

    def _paint(self) -> None:
        colour = (DARK_LEVEL_COLOURS if is_dark(self.palette()) else LEVEL_COLOURS).get(self.level)
        self.label.setStyleSheet(f"color: {colour.name()};" if colour is not None else "")
        chunk = f"QProgressBar::chunk {{ background: {colour.name()}; }}" if colour is not None else ""
        self.bar.setStyleSheet(chunk)
        self.setProperty("level", self.level)

    def _raise(self) -> None:
        if self.offer is not None:
            self.raise_requested.emit(self.offer.n_ctx)

    def _menu(self, pos: QPoint) -> None:
        menu = QMenu(self)
        menu.addSection("When a conversation outgrows the context")
        group = QActionGroup(menu)
        for policy in OverflowPolicy:
            action = QAction(policy.label, menu, checkable=True, checked=policy is self.policy)
            action.setToolTip(policy.description)
            action.triggered.connect(lambda _on, p=policy: self.policy_chosen.emit(p.value))
            group.addAction(action)
            menu.addAction(action)
        if self.offer is not None:
            menu.addSeparator()
            menu.addAction(raise_text(self.offer)).triggered.connect(self._raise)
        menu.popup(self.mapToGlobal(pos))
