"""MCP tools: the servers' settings, the tools offered, and tool calls run and shown in the transcript."""
