"""A tiny real MCP server for the window's tests, run over stdio with the SDK's MCPServer (mcp 2's
FastMCP): ``add(a, b)`` adds two integers and appends ``a+b=sum`` to the file named by
MCP_TEST_LOG, so a test can see whether it ran."""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("calc")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    with Path(os.environ["MCP_TEST_LOG"]).open("a", encoding="utf-8") as log:
        log.write(f"{a}+{b}={a + b}\n")
    return a + b


if __name__ == "__main__":
    server.run("stdio")
