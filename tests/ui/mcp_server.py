"""A tiny real MCP server for the window's tests, run over stdio with the SDK's MCPServer (mcp 2's
FastMCP): ``add(a, b)`` adds two integers and appends ``a+b=sum`` to the file named by
MCP_TEST_LOG, so a test can see whether it ran. With MCP_TEST_SCHEMAS=hostile it also offers
``total`` (at least 10,000,000 numbers: no grammar takes it); with MCP_TEST_SCHEMAS=long, only
``tally`` (up to 20,000 numbers, which once crashed the engine) besides ``add``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

server = MCPServer("calc")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    with Path(os.environ["MCP_TEST_LOG"]).open("a", encoding="utf-8") as log:
        log.write(f"{a}+{b}={a + b}\n")
    return a + b


if os.environ.get("MCP_TEST_SCHEMAS") == "hostile":

    @server.tool()
    def total(numbers: Annotated[list[int], Field(min_length=10_000_000)]) -> int:
        """Add at least ten million integers."""
        return sum(numbers)


if os.environ.get("MCP_TEST_SCHEMAS") == "long":

    @server.tool()
    def tally(numbers: Annotated[list[int], Field(min_length=1, max_length=20_000)]) -> int:
        """Add up to twenty thousand integers."""
        return sum(numbers)


if __name__ == "__main__":
    server.run("stdio")
