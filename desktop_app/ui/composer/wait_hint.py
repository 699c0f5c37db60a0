"""What Enter does while an answer streams: nothing is sent, the text stays in the box, and a
line above the box says why and what to do (like LM Studio and Jan, where Send waits for the
answer too). It goes once the answer ends; the next Enter sends the box's text as it is."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel, QWidget

WAIT_TEXT = "The answer is still coming: your message stays here. Press Enter once it ends, or Esc to stop it."
CHECK_MS = 100  # while shown: how often it asks whether the answer has ended


class WaitHint(QLabel):
    """The line shown above the message box when Enter is pressed while an answer streams
    (objectName ``waitHint``); hidden until then, and again once ``busy()`` is False."""

    def __init__(self, busy: Callable[[], bool], parent: QWidget | None = None) -> None:
        super().__init__(WAIT_TEXT, parent)
        self.setObjectName("waitHint")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)
        self.setContentsMargins(6, 2, 6, 2)
        self.setStyleSheet("font-style: italic;")
        self.hide()
        self._busy = busy
        self._timer = QTimer(self)
        self._timer.setInterval(CHECK_MS)
        self._timer.timeout.connect(self._check)

    def held(self) -> bool:
        """Whether a message must wait (an answer is running): then the line shows."""
        if not self._busy():
            return False
        self.show()
        self._timer.start()
        return True

    def _check(self) -> None:
        if not self._busy():
            self._timer.stop()
            self.hide()  # the answer ended: Enter sends again
