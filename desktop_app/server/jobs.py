"""Waiting on a generation job from an async handler without blocking the event loop, for every
endpoint that answers with the engine (OpenAI's, Anthropic's)."""

from __future__ import annotations

import asyncio
import queue
from typing import Any

from starlette.requests import Request

from desktop_app.server.backend import Job

POLL_S = 0.05  # how often a waiting handler looks for the client going away
FLUSH_S = 0.03  # streamed text goes out at most ~30 times a second, whatever the model's speed


async def next_event(job: Job, request: Request) -> Any:
    """The job's next event (a Failed is raised); None (and the job cancelled) when the client
    disconnects meanwhile."""
    loop = asyncio.get_running_loop()
    while True:
        try:
            return await loop.run_in_executor(None, job.next, POLL_S)
        except queue.Empty:
            pass  # nothing yet: see whether the client is still there, then wait again
        if await request.is_disconnected():
            job.cancel.set()
            return None
