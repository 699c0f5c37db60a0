"""The banner that says why a model did not load, and stays until the user dismisses it."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from desktop_app.ui.widgets.plain_text import plain_label, plain_tip


class LoadBanner(QFrame):
    """A failed load's reason and what is loaded instead; "Choose a model…" and "Dismiss".

    Signals:
        choose_requested(): the user clicked "Choose a model…" (the window opens the library).
    """

    choose_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("loadBanner")
        self.setAccessibleName("Model load failed")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.ToolTipBase)
        self.setForegroundRole(QPalette.ColorRole.ToolTipText)
        self.message = plain_label()
        self.message.setObjectName("loadBannerText")
        self.message.setWordWrap(True)
        self.choose = QPushButton("Choose a model…")
        self.choose.setObjectName("loadBannerChoose")
        self.choose.clicked.connect(self.choose_requested.emit)
        self.dismiss = QPushButton("Dismiss")
        self.dismiss.setObjectName("loadBannerDismiss")
        self.dismiss.setAccessibleName("Dismiss the load error")
        self.dismiss.clicked.connect(self.hide)
        buttons = QHBoxLayout()  # under the text: a narrow chat column keeps it readable
        buttons.addStretch(1)
        buttons.addWidget(self.choose)
        buttons.addWidget(self.dismiss)
        layout = QVBoxLayout(self)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        self.hide()

    def show_failure(self, reason: str, still_loaded: str | None) -> None:
        """``still_loaded``: the name of the target that still answers, None when none is loaded."""
        after = (
            f"{still_loaded} is still loaded and answers."
            if still_loaded
            else "No model is loaded: choose one to chat."
        )
        self.message.setText(f"The model did not load: {reason.rstrip('.')}. {after}")
        self.message.setToolTip(plain_tip(reason))
        self.show()
