"""Preferences → Tools: the MCP servers whose tools conversations may use. Add, edit and remove
stdio servers (a name, the command and its arguments, extra environment), switch each on or off,
and choose the tools that run without asking. Nothing runs until a server is added here."""

from __future__ import annotations

import shlex
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.store.tool_servers import ALL_TOOLS, ToolServer, read_servers
from desktop_app.ui.widgets.plain_text import plain_label

NOTE = (
    "Each server is a program SpecChat starts (stdio), e.g. command 'npx' with arguments "
    "'-y @modelcontextprotocol/server-filesystem ~/notes'. The model may ask to call its tools; "
    "each call asks you first unless its tool is always allowed below."
)
NO_TOOLS_YET = "Its tools are listed here once it has started: switch it on, OK, then come back here."


def parse_env(text: str) -> dict[str, str]:
    """``NAME=value`` lines (blank lines skipped); ValueError naming a line without ``=``."""
    env = {}
    for line in text.splitlines():
        if line.strip():
            name, eq, value = line.partition("=")
            if not eq or not name.strip():
                raise ValueError(f"'{line.strip()}' is not NAME=value")
            env[name.strip()] = value
    return env


class McpServersField(QWidget):
    """The ``mcp_servers`` setting as a list of servers and an editor for the one selected.

    Signals:
        validity_changed(): the servers became valid or bad (the error is shown under the list).
    """

    validity_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mcp_servers")
        self.servers: list[dict[str, Any]] = []  # as edited: args as typed, env as text
        self.known_tools: dict[str, list[str]] = {}  # server name -> its tools, from the running servers
        self.list = QListWidget()
        self.list.setObjectName("mcpServerList")
        self.list.setAccessibleName("MCP servers (checked: on)")
        self.list.setMaximumHeight(96)  # the editor and its "Always allow" list fit the dialog
        self.list.currentRowChanged.connect(self._show_current)
        self.list.itemChanged.connect(self._on_item_changed)
        self.add_button, self.remove_button = QPushButton("Add server"), QPushButton("Remove")
        self.add_button.clicked.connect(self.add_server)
        self.remove_button.clicked.connect(self.remove_server)
        self.name, self.command, self.args = QLineEdit(), QLineEdit(), QLineEdit()
        self.env = QPlainTextEdit()
        self.env.setPlaceholderText("NAME=value, one per line")
        self.env.setMaximumHeight(60)
        self.allowed = QListWidget()
        self.allowed.setObjectName("mcpAlwaysAllow")
        self.allowed.setAccessibleName("Tools that run without asking")
        self.allowed.setMaximumHeight(80)
        self.allow_all = QCheckBox("Every tool of this server")
        self.allow_all.setObjectName("mcpAllowAll")
        self.allow_all.toggled.connect(lambda _on: self._on_allowed_changed(None))
        self.allowed_hint = plain_label(NO_TOOLS_YET)
        self.allowed_hint.setObjectName("mcpNoToolsYet")
        self.allowed_hint.setWordWrap(True)
        allow_box = QWidget()
        allow_column = QVBoxLayout(allow_box)
        allow_column.setContentsMargins(0, 0, 0, 0)
        for part in (self.allow_all, self.allowed, self.allowed_hint):
            allow_column.addWidget(part)
        allow_column.addStretch(1)
        for widget, key, name in (
            (self.name, "name", "Server name"), (self.command, "command", "Command"), (self.args, "args", "Arguments"),
        ):  # fmt: skip
            widget.setAccessibleName(name)
            widget.textEdited.connect(lambda text, key=key: self._edit(key, text))
        self.env.textChanged.connect(lambda: self._edit("env", self.env.toPlainText()))
        self.allowed.itemChanged.connect(self._on_allowed_changed)
        self.error = plain_label()
        self.error.setObjectName("mcpServerError")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: palette(link);")
        self.editor = QWidget()
        form = QFormLayout(self.editor)
        form.setContentsMargins(0, 0, 0, 0)
        rows: list[tuple[str, QWidget]] = [
            ("Name", self.name), ("Command", self.command), ("Arguments", self.args), ("Environment", self.env),
            ("Always allow", allow_box),
        ]  # fmt: skip
        for label, row in rows:
            form.addRow(label, row)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.list)
        layout.addLayout(buttons)
        layout.addWidget(self.editor)
        layout.addWidget(self.error)
        note = QLabel(NOTE)
        note.setWordWrap(True)
        layout.addWidget(note)
        self._valid = True
        self._show_current(-1)

    # ------------------------------------------------------------------ Field
    @property
    def valid(self) -> bool:
        return self._valid

    def value(self) -> list[dict[str, Any]]:
        return [s.to_json() for s in self._parsed()]

    def set_value(self, value: list[dict[str, Any]]) -> None:
        self.servers = [
            {**s.to_json(), "args": shlex.join(s.args), "env": "".join(f"{k}={v}\n" for k, v in s.env.items())}
            for s in read_servers(value)
        ]
        self._fill_list(0 if self.servers else -1)

    def set_known_tools(self, tools: dict[str, list[str]]) -> None:
        """The tools each running server offers (offered in its "Always allow" list)."""
        self.known_tools = tools
        self._show_current(self.list.currentRow())

    # ------------------------------------------------------------------ editing
    def add_server(self) -> None:
        names = {s["name"] for s in self.servers}
        name = next(f"server {i}" for i in range(1, len(names) + 2) if f"server {i}" not in names)
        self.servers.append({"name": name, "command": "", "args": "", "env": "", "enabled": True, "always_allow": []})
        self._fill_list(len(self.servers) - 1)
        self.command.setFocus()
        self._check()

    def remove_server(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self.servers):
            del self.servers[row]
            self._fill_list(min(row, len(self.servers) - 1))
            self._check()

    def _fill_list(self, row: int) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for s in self.servers:
            item = QListWidgetItem(s["name"])
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if s["enabled"] else Qt.CheckState.Unchecked)
            self.list.addItem(item)
        self.list.blockSignals(False)
        self.list.setCurrentRow(row)
        self._show_current(row)

    def _show_current(self, row: int) -> None:
        server = self.servers[row] if 0 <= row < len(self.servers) else None
        self.editor.setEnabled(server is not None)
        self.remove_button.setEnabled(server is not None)
        server = server or {"name": "", "command": "", "args": "", "env": "", "always_allow": []}
        for widget, key in ((self.name, "name"), (self.command, "command"), (self.args, "args")):
            widget.setText(server[key])
        self.env.blockSignals(True)
        self.env.setPlainText(server["env"])
        self.env.blockSignals(False)
        self.allowed.blockSignals(True)
        self.allowed.clear()
        self.allow_all.blockSignals(True)
        self.allow_all.setChecked(ALL_TOOLS in server["always_allow"])
        self.allow_all.blockSignals(False)
        tools = dict.fromkeys([*self.known_tools.get(server["name"], []), *server["always_allow"]])
        for tool in (t for t in tools if t != ALL_TOOLS):
            item = QListWidgetItem(tool)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            on = tool in server["always_allow"]
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
            self.allowed.addItem(item)
        self.allowed.blockSignals(False)
        self._show_allowed()

    def _show_allowed(self) -> None:
        """The tool list, off while every tool is allowed; a word where no tool is known yet."""
        self.allowed.setEnabled(not self.allow_all.isChecked())
        self.allowed.setVisible(self.allowed.count() > 0)
        self.allowed_hint.setVisible(self.allowed.count() == 0 and not self.allow_all.isChecked())

    def _edit(self, key: str, text: str) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self.servers):
            self.servers[row][key] = text
            if key == "name" and (item := self.list.item(row)) is not None:
                item.setText(text)
            self._check()

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        self.servers[self.list.row(item)]["enabled"] = item.checkState() == Qt.CheckState.Checked

    def _on_allowed_changed(self, _item: QListWidgetItem | None) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self.servers):
            items = [self.allowed.item(i) for i in range(self.allowed.count())]
            tools = [i.text() for i in items if i.checkState() == Qt.CheckState.Checked]
            self.servers[row]["always_allow"] = [ALL_TOOLS] * self.allow_all.isChecked() + tools
        self._show_allowed()

    def _parsed(self) -> list[ToolServer]:
        """The servers as the setting holds them; ValueError saying what is wrong."""
        out = []
        for s in self.servers:
            try:
                args = shlex.split(s["args"])
            except ValueError as exc:
                raise ValueError(f"{s['name']}: the arguments do not parse ({exc})") from None
            env = parse_env(s["env"])
            out.append({**s, "name": s["name"].strip(), "args": args, "env": env})
        return read_servers(out)

    def _check(self) -> None:
        was = self._valid
        try:
            self._parsed()
            self._valid, message = True, ""
        except ValueError as exc:
            self._valid, message = False, str(exc)
        self.error.setText(message)
        self.error.setVisible(bool(message))
        if was != self._valid:
            self.validity_changed.emit()


def tools_page(fields: dict[str, Any]) -> QWidget:
    field = fields["mcp_servers"] = McpServersField()
    return field
