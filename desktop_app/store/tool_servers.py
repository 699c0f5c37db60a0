"""The MCP servers the user added in Settings: how each is started (a stdio command), whether it
is on, and the tools the user always allows. Declared here once; the ``mcp_servers`` setting holds
them as JSON objects (:data:`desktop_app.store.settings.SETTINGS`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

ALL_TOOLS = "*"  # in ``always_allow``: every tool of the server runs without asking


@dataclass(frozen=True)
class ToolServer:
    """One MCP server started over stdio: ``command`` with ``args`` and extra ``env``; its tools
    are offered only while it is ``enabled``; the tools named in ``always_allow`` (all of them
    when it holds :data:`ALL_TOOLS`) run without asking first."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    enabled: bool = True
    always_allow: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "command": self.command,
            "args": list(self.args),
            "env": dict(self.env),
            "enabled": self.enabled,
            "always_allow": list(self.always_allow),
        }

    @classmethod
    def from_json(cls, value: Any) -> ToolServer:
        """ValueError when ``value`` is not a server as :meth:`to_json` writes it."""
        if not isinstance(value, dict):
            raise ValueError("an MCP server must be an object")
        name, command = value.get("name"), value.get("command")
        args, env = value.get("args", []), value.get("env", {})
        enabled, allowed = value.get("enabled", True), value.get("always_allow", [])
        if not isinstance(name, str) or not name.strip() or not isinstance(command, str) or not command.strip():
            raise ValueError("an MCP server needs a name and a command")
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError(f"{name}: args must be a list of strings")
        if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise ValueError(f"{name}: env must map names to strings")
        if (
            not isinstance(enabled, bool)
            or not isinstance(allowed, list)
            or not all(isinstance(a, str) for a in allowed)
        ):
            raise ValueError(f"{name}: enabled must be true or false, always_allow a list of tool names")
        return cls(name.strip(), command.strip(), tuple(args), dict(env), enabled, tuple(allowed))

    def allows(self, tool: str) -> bool:
        """Whether ``tool`` runs without asking first."""
        return tool in self.always_allow or ALL_TOOLS in self.always_allow

    def allowing(self, tool: str) -> ToolServer:
        """This server with ``tool`` (every tool: :data:`ALL_TOOLS`) always allowed."""
        return self if tool in self.always_allow else replace(self, always_allow=(*self.always_allow, tool))


def read_servers(value: Any) -> list[ToolServer]:
    """The servers a setting's value holds (ValueError for one that is malformed or a name used twice)."""
    if not isinstance(value, list):
        raise ValueError("the MCP servers must be a list")
    servers = [ToolServer.from_json(v) for v in value]
    names = [s.name for s in servers]
    if len(set(names)) != len(names):
        raise ValueError("two MCP servers have the same name")
    return servers


def valid_servers(value: Any) -> bool:
    try:
        read_servers(value)
    except ValueError:
        return False
    return True
