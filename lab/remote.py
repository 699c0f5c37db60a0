"""``python -m lab remote``: the target spread over two workers behind an added network delay.

Starts two ``specchat worker`` processes on this computer, puts a delaying TCP relay in front of
each (every byte waits half the delay each way, so each round trip costs the delay more, as on a
LAN), loads the target across them, and times speculation off against Auto on the same loaded
engine, interleaved, for each delay. Reports tokens/s, Auto's speed-up (median of the ratios
taken within each round) and tokens per target pass: the gain grows with the latency, because a
plain token pays the round trips once per token and a speculative cycle once per k + 1 tokens.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from desktop_app.engine.api import GenerateRequest, LayerSplit, ModelOptions, SpecMode, WorkerAddress
from desktop_app.engine.events import final_result

DELAYS_MS = (0.0, 2.0, 10.0)
START_TIMEOUT_S = 60.0


class DelayRelay:
    """Listens on a localhost port and forwards each connection to ``target``, every chunk
    delivered ``one_way_s`` after it arrived (order kept, bandwidth unlimited)."""

    def __init__(self, target: WorkerAddress, round_trip_s: float) -> None:
        self.target = target
        self.one_way_s = round_trip_s / 2
        self._server = socket.create_server(("127.0.0.1", 0))
        self.address = WorkerAddress("127.0.0.1", self._server.getsockname()[1])
        self._closed = False
        threading.Thread(target=self._accept, name="relay-accept", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection((self.target.host, self.target.port))
            except OSError:
                client.close()
                continue
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._pump(client, upstream)
            self._pump(upstream, client)

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        queue: deque[tuple[float, bytes]] = deque()
        ready = threading.Condition()

        def receive() -> None:
            while True:
                try:
                    data = source.recv(1 << 16)
                except OSError:
                    data = b""
                with ready:
                    queue.append((time.perf_counter() + self.one_way_s, data))
                    ready.notify()
                if not data:
                    return

        def send() -> None:
            while True:
                with ready:
                    while not queue:
                        ready.wait()
                    due, data = queue.popleft()
                wait = due - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                if not data:
                    with suppress(OSError):
                        sink.shutdown(socket.SHUT_WR)
                    return
                try:
                    sink.sendall(data)
                except OSError:
                    return

        threading.Thread(target=receive, daemon=True).start()
        threading.Thread(target=send, daemon=True).start()

    def close(self) -> None:
        self._closed = True
        self._server.close()


def _specchat_command() -> list[str]:
    return [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "desktop_app"]


@contextmanager
def local_workers(n: int, threads: int, log_dir: Path) -> Iterator[list[WorkerAddress]]:
    """``n`` ``specchat worker`` processes on free localhost ports, stopped afterwards."""
    from desktop_app.engine.errors import WorkerError
    from desktop_app.engine.llama import rpc

    processes: list[subprocess.Popen[bytes]] = []
    addresses: list[WorkerAddress] = []
    try:
        for _ in range(n):
            with socket.socket() as probe_port:
                probe_port.bind(("127.0.0.1", 0))
                port = probe_port.getsockname()[1]
            with (log_dir / f"worker-{port}.log").open("wb") as log:
                processes.append(
                    subprocess.Popen(
                        [*_specchat_command(), "worker", "--port", str(port), "--threads", str(threads)],
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    )
                )
            address = WorkerAddress("127.0.0.1", port)
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                try:
                    rpc.probe(address, timeout_s=2.0)
                    break
                except WorkerError:
                    if processes[-1].poll() is not None or time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            addresses.append(address)
        yield addresses
    finally:
        for process in processes:
            process.kill()
            process.wait(10)


def _run(engine: Any, prompt: str, spec: SpecMode, max_tokens: int, draft_max: int) -> Any:
    request = GenerateRequest(
        messages=[{"role": "user", "content": prompt}], max_tokens=max_tokens, spec=spec, draft_max=draft_max
    )
    return final_result(engine.generate(request)).stats


def measure(
    args: argparse.Namespace, prompts: list[str], out_dir: Path, engine_factory: Callable[[], Any]
) -> dict[str, Any]:
    """For each delay: off vs Auto, ``args.repeats`` interleaved rounds over ``prompts``."""
    from desktop_app.engine import default_model_path

    out_dir.mkdir(parents=True, exist_ok=True)
    target = args.target or default_model_path()
    rows: list[dict[str, Any]] = []
    with local_workers(2, 1, out_dir) as workers:
        for delay_ms in DELAYS_MS:
            relays = [DelayRelay(w, delay_ms / 1000) for w in workers]
            engine = engine_factory()
            try:
                engine.load_target(
                    target,
                    ModelOptions(
                        n_ctx=args.ctx,
                        n_threads=args.threads or 1,
                        workers=tuple(r.address for r in relays),
                        split=args.split or LayerSplit(),
                    ),
                )
                engine.prepare_auto(None, max(args.draft_max))
                ratios: list[float] = []
                off_tps: list[float] = []
                auto_tps: list[float] = []
                per_pass_off: list[float] = []
                per_pass_auto: list[float] = []
                k_used: list[float] = []
                for _ in range(args.repeats):
                    for prompt in prompts:
                        off = _run(engine, prompt, SpecMode.OFF, args.max_tokens, max(args.draft_max))
                        auto = _run(engine, prompt, SpecMode.AUTO, args.max_tokens, max(args.draft_max))
                        ratios.append(auto.decode_tokens_per_s / off.decode_tokens_per_s)
                        off_tps.append(off.decode_tokens_per_s)
                        auto_tps.append(auto.decode_tokens_per_s)
                        per_pass_off.append(off.tokens_per_pass)
                        per_pass_auto.append(auto.tokens_per_pass)
                        k_used.append(statistics.mean(auto.k_history) if auto.k_history else 0.0)
                rows.append(
                    {
                        "delay_ms": delay_ms,
                        "off_tok_s": statistics.median(off_tps),
                        "auto_tok_s": statistics.median(auto_tps),
                        "speedup": statistics.median(ratios),
                        "off_tokens_per_pass": statistics.median(per_pass_off),
                        "auto_tokens_per_pass": statistics.median(per_pass_auto),
                        "auto_k_mean": statistics.median(k_used),
                        "runs": len(ratios),
                    }
                )
                print(_row(rows[-1]), flush=True)
            finally:
                engine.close()
                for relay in relays:
                    relay.close()
    report = {"target": str(target), "workers": 2, "split": str(args.split or "equal"), "rows": rows}
    (out_dir / "remote.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    (out_dir / "remote.md").write_text(table(rows), encoding="utf-8")
    return report


HEADER = (
    "| added delay per round trip | off tok/s | Auto tok/s | Auto / off (median of ratios) "
    "| tokens per target pass, off → Auto | Auto's mean k |\n|---|---|---|---|---|---|\n"
)


def _row(r: dict[str, Any]) -> str:
    return (
        f"| {r['delay_ms']:g} ms | {r['off_tok_s']:.1f} | {r['auto_tok_s']:.1f} | {r['speedup']:.2f}x "
        f"| {r['off_tokens_per_pass']:.2f} → {r['auto_tokens_per_pass']:.2f} | {r['auto_k_mean']:.1f} |"
    )


def table(rows: list[dict[str, Any]]) -> str:
    return HEADER + "\n".join(_row(r) for r in rows) + "\n"
