"""MCP servers that fail in every way leave one line each on stderr, never a traceback, a pydantic
report or asyncio's "Future exception was never retrieved": the host runs in a child process (as
the window's does, on its own thread's loop), its stderr read whole after it ends."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

# A server whose stdout is not JSON-RPC; one that answers initialize with an error and stays;
# one that never answers; one that exits at once; a command that does not exist.
HOST = textwrap.dedent(
    """
    import gc, sys, time
    from desktop_app.store.tool_servers import ToolServer
    from desktop_app.tools.mcp_host import McpHost

    py = sys.executable
    garbage = "import sys, time\\nprint('hello', flush=True)\\nprint('{\\"jsonrpc\\": 1}', flush=True)\\ntime.sleep(5)"
    refuses = (
        "import json, sys, time\\nreq = json.loads(sys.stdin.readline())\\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': req['id'], 'error': {'code': -1, 'message': 'no'}}), flush=True)\\n"
        "time.sleep(5)"
    )
    servers = [
        ToolServer("garbage", py, ("-c", garbage)),
        ToolServer("refuses", py, ("-c", refuses)),
        ToolServer("silent", py, ("-c", "import time; time.sleep(30)")),
        ToolServer("exits", py, ("-c", "import sys; sys.stderr.write('Traceback: its own\\\\n'); sys.exit(1)")),
        ToolServer("missing", "/nonexistent/mcp-server"),
    ]
    host = McpHost(start_timeout_s=1.5)
    for state in host.start(servers).result(60):
        print(state.name, bool(state.tools), state.error, sep="|")
    for _ in range(3):
        gc.collect()
        time.sleep(0.3)
    host.close()
    gc.collect()
    """
)


def test_failing_servers_leave_one_line_each_on_stderr(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", HOST], capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2]
    )
    assert done.returncode == 0, done.stderr
    states = dict(line.split("|", 1) for line in done.stdout.splitlines())
    assert set(states) == {"garbage", "refuses", "silent", "exits", "missing"}, done.stdout
    assert all(state.startswith("False|") and "did not start" in state for state in states.values()), states
    assert "Traceback: its own" in states["exits"]  # the server's own words are in its state, not on stderr
    stderr = done.stderr
    assert "never retrieved" not in stderr and "Traceback" not in stderr and "pydantic" not in stderr, stderr
    assert all(line.startswith("specchat: MCP: ") for line in stderr.splitlines()), stderr
    assert "Failed to parse JSONRPC message" in stderr  # said, in one line a time
