"""What serving costs: streamed tokens/s through the API (`specchat serve`'s way: an engine
process behind the HTTP server) against an engine in this process, on the same model file.

Both sides time an answer the same way, from the request to the last streamed piece, interleaved
round by round (the idle side takes no CPU); the figure is the median of the per-round ratios
(API / in-process).
"""

from __future__ import annotations

import socket
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

from desktop_app.engine import Engine
from desktop_app.engine.api import GenerateRequest, Message, SamplingParams, SpecMode
from desktop_app.engine.events import final_result
from desktop_app.engine_process.client import EngineProcess
from desktop_app.engine_process.protocol import AutoPlan, Load
from desktop_app.server.engine_backend import EngineBackend

PROMPT = "Write a short story about a lighthouse keeper and a storm."


def _in_process(engine: Engine, max_tokens: int, spec: SpecMode) -> tuple[float, int]:
    request = GenerateRequest(
        messages=[Message(role="user", content=PROMPT)],
        max_tokens=max_tokens,
        spec=spec,
        sampling=SamplingParams(temperature=0.0),
    )
    pieces: list[str] = []
    start = time.perf_counter()
    done = final_result(engine.generate(request), lambda chunk: pieces.append(chunk.text))
    return time.perf_counter() - start, len(done.token_ids)


# The client runs in its own process, as an editor or a script would, streaming over raw HTTP;
# it times from sending the request to the last piece and prints "seconds tokens".
_CLIENT = """
import json, sys, time
import httpx2 as httpx
url, max_tokens, spec, prompt = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
body = {"messages": [{"role": "user", "content": prompt}], "temperature": 0, "max_tokens": max_tokens,
        "stream": True, "stream_options": {"include_usage": True}, "speculation": spec}
with httpx.Client(timeout=600) as client:
    client.get(url + "/models")  # connect first: the timed part is the answer
    start = time.perf_counter()
    tokens = 0
    with client.stream("POST", url + "/chat/completions", json=body) as reply:
        for line in reply.iter_lines():
            if line.startswith("data: {"):
                usage = json.loads(line[6:]).get("usage")
                if usage:
                    tokens = usage["completion_tokens"]
    print(time.perf_counter() - start, tokens)
"""


def _over_api(url: str, max_tokens: int, spec: SpecMode) -> tuple[float, int]:
    out = subprocess.run(
        [sys.executable, "-c", _CLIENT, url, str(max_tokens), spec.value, PROMPT],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    seconds, tokens = out.stdout.split()
    return float(seconds), int(tokens)


def measure(engine: Engine, rounds: int = 7, max_tokens: int = 128, spec: SpecMode = SpecMode.OFF) -> dict[str, Any]:
    from desktop_app.server.app import create_app
    from desktop_app.server.http_server import make_server

    assert engine.target is not None
    process = EngineProcess()
    process.load_and_wait(Load(str(engine.target.path), engine.target.options, plan=AutoPlan(measure=False)))
    backend = EngineBackend(process)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = make_server(create_app(backend), "127.0.0.1", port)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}/v1"
    ratios, local_tps, api_tps = [], [], []
    try:
        _over_api(url, 16, spec)  # warm-up: prompt cache, first HTTP connection
        for i in range(rounds):
            order = ("local", "api") if i % 2 == 0 else ("api", "local")
            speeds = {}
            for side in order:
                seconds, tokens = (
                    _in_process(engine, max_tokens, spec) if side == "local" else _over_api(url, max_tokens, spec)
                )
                speeds[side] = tokens / seconds
            local_tps.append(speeds["local"])
            api_tps.append(speeds["api"])
            ratios.append(speeds["api"] / speeds["local"])
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        backend.close()
        process.shutdown()
    return {
        "model": engine.target.name if engine.target else "?",
        "rounds": rounds,
        "max_tokens": max_tokens,
        "spec": spec.value,
        "in_process_tokens_per_s": round(statistics.median(local_tps), 2),
        "api_streamed_tokens_per_s": round(statistics.median(api_tps), 2),
        "api_vs_in_process": round(statistics.median(ratios), 4),
        "ratios": [round(r, 4) for r in ratios],
    }
