"""A logging reverse proxy between an agent and ``specchat serve``: every request's method, path,
body and the status it got, the body of every answer that is not a 2xx, and whether the client
left before the answer ended. Streams pass through as they come."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from tests.server.live_server import free_port

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host", "content-length"}


@dataclass
class Exchange:
    method: str
    path: str
    body: bytes
    started: float
    status: int | None = None
    answer: bytes = b""  # kept for answers that are not 2xx
    finished: bool = False  # the whole answer reached the client
    seconds: float | None = None

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.method.encode() + self.path.encode() + self.body).hexdigest()

    @property
    def streamed(self) -> bool:
        try:
            return json.loads(self.body).get("stream") is True
        except (ValueError, AttributeError):
            return False

    def describe(self) -> str:
        body = self.body[:2000].decode(errors="replace")
        return f"{self.method} {self.path} -> {self.status} ({len(self.body)} bytes): {body!r} answer {self.answer[:2000]!r}"


@dataclass
class LoggingProxy:
    upstream: str
    exchanges: list[Exchange] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.client = httpx.AsyncClient(base_url=self.upstream, timeout=None)
        app = Starlette(
            routes=[Route("/{path:path}", self.forward, methods=["GET", "POST", "HEAD", "OPTIONS", "DELETE", "PUT"])]
        )
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started and time.time() < deadline:
            time.sleep(0.05)
        assert self.server.started

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)

    async def forward(self, request: Request) -> Response:
        body = await request.body()
        path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        exchange = Exchange(request.method, path, body, time.time())
        self.exchanges.append(exchange)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        upstream = await self.client.send(
            self.client.build_request(request.method, path, headers=headers, content=body), stream=True
        )
        exchange.status = upstream.status_code
        out_headers = {k: v for k, v in upstream.headers.items() if k.lower() not in HOP_BY_HOP}

        async def relay():  # type: ignore[no-untyped-def]
            try:
                async for chunk in upstream.aiter_raw():
                    if not 200 <= upstream.status_code < 300:
                        exchange.answer += chunk
                    yield chunk
                exchange.finished = True
            finally:
                exchange.seconds = time.time() - exchange.started
                await upstream.aclose()

        return StreamingResponse(relay(), status_code=upstream.status_code, headers=out_headers)

    def dump(self, directory: Path) -> None:
        """Each request's body (and a non-2xx answer's) in ``directory``, numbered in order."""
        directory.mkdir(parents=True, exist_ok=True)
        for n, e in enumerate(self.exchanges):
            name = f"{n:02d}-{e.method}-{e.path.strip('/').split('?')[0].replace('/', '_')}"
            (directory / f"{name}.request").write_bytes(e.body)
            if e.answer:
                (directory / f"{name}.{e.status}.answer").write_bytes(e.answer)

    def summary(self) -> str:
        return "\n".join(
            f"  {e.method} {e.path} -> {e.status} in {e.seconds if e.seconds is None else round(e.seconds, 1)} s, "
            f"{len(e.body)} bytes{', streamed' if e.streamed else ''}{'' if e.finished else ' (left before the end)'}"
            for e in self.exchanges
        )
