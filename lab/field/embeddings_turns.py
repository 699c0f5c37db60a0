"""`specchat serve` (built-in model, fresh SPECCHAT_HOME): the issue-46 embeddings reproduction
(2,048 texts), then an embeddings request just under the 16,384-token cap and, 1 s later, a chat
request: when each is answered, and the RSS of the server and its engine process together.

    python lab/field/embeddings_turns.py [PORT]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx


def _rss_mb(pid: int) -> int:
    pids = [pid] + [int(c) for t in Path(f"/proc/{pid}/task").iterdir() for c in (t / "children").read_text().split()]
    total = 0
    for p in pids:
        try:
            status = Path(f"/proc/{p}/status").read_text()
        except FileNotFoundError:
            continue
        total += sum(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
    return total // 1024


def _wait_serving(base: str) -> None:
    for _ in range(600):
        try:
            if httpx.get(base + "/v1/models", timeout=1).json().get("data"):
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit("the server did not start")


def _texts(count: int) -> list[str]:
    return [" ".join(f"word{i}x{j}" for j in range(60)) for i in range(count)]


def main(port: int) -> dict[str, Any]:
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "SPECCHAT_HOME": tempfile.mkdtemp(prefix="specchat-home-")}
    command = [sys.executable, "-m", "desktop_app", "serve", "--port", str(port), "--spec", "off"]
    server = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    out: dict[str, Any] = {}
    try:
        _wait_serving(base)
        hi = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4}
        httpx.post(base + "/v1/chat/completions", json=hi, timeout=120)
        before = _rss_mb(server.pid)
        start = time.perf_counter()
        refused = httpx.post(base + "/v1/embeddings", json={"input": _texts(2048)}, timeout=600)
        out["reproduction"] = [refused.status_code, round(time.perf_counter() - start, 2)]
        start = time.perf_counter()

        def embed() -> None:
            reply = httpx.post(base + "/v1/embeddings", json={"input": _texts(48)}, timeout=600)
            out["embeddings"] = [reply.status_code, round(time.perf_counter() - start, 2), reply.json().get("usage")]

        thread = threading.Thread(target=embed)
        thread.start()
        time.sleep(1.0)
        asked = time.perf_counter()
        say = {"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 16}
        chat = httpx.post(base + "/v1/chat/completions", json=say, timeout=600)
        out["chat_during"] = [chat.status_code, round(time.perf_counter() - asked, 2)]
        during = _rss_mb(server.pid)
        thread.join()
        out["rss_mb"] = {"before": before, "during": during, "after": _rss_mb(server.pid)}
    finally:
        server.terminate()
        server.wait(30)
    return out


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 8932)))
