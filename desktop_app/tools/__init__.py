"""The tools of the user's MCP servers: started, listed and called away from the window's thread,
with the official ``mcp`` SDK. Never imports Qt."""
