"""A tool call in the transcript: a folded card under the answer that made it (the tool's name,
its arguments and where it stands), unfolding to the arguments and the result; while it waits,
it asks whether to run it."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QComboBox, QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QVBoxLayout, QWidget

from desktop_app.store.tool_calls import CallStatus, ToolCallRecord
from desktop_app.ui.widgets.flow_layout import FlowLayout
from desktop_app.ui.widgets.plain_text import plain_label, plain_tip

ONCE, ALWAYS, DENY = "once", "always", "deny"
ALWAYS_SERVER = "always-server"  # always allow every tool of the call's server
LINE_ARGUMENTS = 80  # characters of the arguments shown on the folded card


def pretty(arguments: str) -> str:
    """JSON arguments indented (as the model wrote them when they are not JSON)."""
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments


def one_line(arguments: str) -> str:
    try:
        text = json.dumps(json.loads(arguments), ensure_ascii=False)
    except ValueError:
        text = " ".join(arguments.split())
    return text if len(text) <= LINE_ARGUMENTS else text[: LINE_ARGUMENTS - 1] + "…"


class ToolCallCard(QFrame):
    """Signals:
    decided(str): the user answered the question: ONCE, ALWAYS (this tool), ALWAYS_SERVER (every
        tool of its server: the scope box next to *Always allow*) or DENY.
    """

    decided = Signal(str)

    def __init__(self, record: ToolCallRecord, server: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("toolCallCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.AlternateBase)
        self.record = record
        self.server = server
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        self.header = QToolButton()
        self.header.setObjectName("toolCallHeader")
        self.header.setCheckable(True)
        self.header.setAutoRaise(True)
        self.header.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.header.toggled.connect(self.unfold)
        layout.addWidget(self.header)
        self.details = QLabel()
        self.details.setObjectName("toolCallDetails")
        self.details.setTextFormat(Qt.TextFormat.PlainText)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setWordWrap(True)
        self.details.hide()
        layout.addWidget(self.details)
        self.question = QWidget()
        row = FlowLayout(self.question)  # wraps in a narrow transcript: no sideways scrolling
        row.setContentsMargins(0, 0, 0, 0)
        where = f" from {server}" if server else ""
        row.addWidget(plain_label(f"Run this tool{where}?"))  # the server's name as written
        self.buttons: dict[str, QPushButton] = {}
        self.scope = QComboBox()  # what *Always allow* allows: a choice, not words to type
        self.scope.setObjectName("alwaysAllowScope")
        self.scope.setAccessibleName("What Always allow allows")
        self.scope.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.scope.setMinimumContentsLength(14)  # a long tool or server name is elided (its tooltip has it)
        self.scope.addItem(f"this tool ({record.name})", ALWAYS)
        if server:
            self.scope.addItem(f"every tool from {server}", ALWAYS_SERVER)
        self.scope.setEnabled(self.scope.count() > 1)
        self.scope.setToolTip(
            plain_tip(f"Always allow {record.name}" + (f", or every tool from {server}" if server else ""))
        )
        for key, text, name in (
            (ONCE, "Allow once", "Allow this call once"),
            (ALWAYS, "Always allow", "Always allow, as chosen next to it"),
            (DENY, "Deny", "Deny this call"),
        ):
            button = self.buttons[key] = QPushButton(text)
            button.setAccessibleName(name)
            button.clicked.connect(lambda _c=False, key=key: self.decided.emit(self._choice(key)))
            if key == ALWAYS:  # with its scope box, on one line
                pair = QWidget()
                both = QHBoxLayout(pair)
                both.setContentsMargins(0, 0, 0, 0)
                both.addWidget(button)
                both.addWidget(self.scope)
                row.addWidget(pair)
            else:
                row.addWidget(button)
        layout.addWidget(self.question)
        self.show_record(record)

    def _choice(self, key: str) -> str:
        """The answer a button gives: *Always allow*'s as its scope box says."""
        return str(self.scope.currentData()) if key == ALWAYS else key

    @property
    def unfolded(self) -> bool:
        return self.details.isVisible()

    def unfold(self, on: bool = True) -> None:
        self.header.blockSignals(True)
        self.header.setChecked(on)
        self.header.blockSignals(False)
        self.header.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        self.details.setVisible(on)

    def show_record(self, record: ToolCallRecord) -> None:
        self.record = record
        status = record.status.value
        self.header.setText(f"{record.name}  {one_line(record.arguments)}  · {status}")
        self.header.setAccessibleName(f"Tool call {record.name}, {status}")
        self.header.setToolTip("Show the arguments and the result" if not self.unfolded else "Fold")
        result = {
            CallStatus.WAITING: "(not run yet)",
            CallStatus.RUNNING: "(running…)",
            CallStatus.DENIED: "Denied: the call was not run.",
            CallStatus.STOPPED: "Stopped: the call did not finish.",
        }.get(record.status, record.result)
        label = "Error" if record.status is CallStatus.FAILED else "Result"
        self.details.setText(f"Arguments:\n{pretty(record.arguments)}\n\n{label}:\n{result}")
        self.question.setVisible(record.status is CallStatus.WAITING)
        self.unfold(self.unfolded)
