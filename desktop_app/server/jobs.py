"""Waiting on a generation job from an async handler without blocking the event loop, for every
endpoint that answers with the engine (OpenAI's, Anthropic's)."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from starlette.requests import Request

from desktop_app.engine.events import Finished, TextChunk
from desktop_app.server.backend import Failed, Job

POLL_S = 0.05  # how often a waiting handler looks for the client going away
FLUSH_S = 0.03  # streamed text goes out at most ~30 times a second, whatever the model's speed


class NothingYet:
    """What :func:`next_event` gives when its wait ran out: a stream starts before its job's
    first event (the job still queued, or its prompt still being made)."""


NOTHING_YET = NothingYet()


async def next_event(job: Job, request: Request, wait_s: float | None = None) -> Any:
    """The job's next event (a Failed is raised); None (and the job cancelled) when the client
    disconnects meanwhile; NOTHING_YET when none came within ``wait_s`` (None: no limit)."""
    loop = asyncio.get_running_loop()
    deadline = None if wait_s is None else loop.time() + wait_s
    while True:
        poll = POLL_S if deadline is None else max(0.0, min(POLL_S, deadline - loop.time()))
        try:
            return await loop.run_in_executor(None, job.next, poll)
        except queue.Empty:
            pass  # nothing yet: see whether the client is still there, then wait again
        if await request.is_disconnected():
            job.cancel.set()
            return None
        if deadline is not None and loop.time() >= deadline:
            return NOTHING_YET


T = TypeVar("T")


async def unless_gone(work: Callable[[threading.Event], T], request: Request) -> T | None:
    """``work(cancel)`` run on a worker thread; None, and ``cancel`` set, when the client
    disconnects first (the work stops at its next look at ``cancel``; its outcome is retrieved
    when it ends, so nothing is logged about it)."""
    cancel = threading.Event()
    task = asyncio.ensure_future(asyncio.to_thread(work, cancel))
    while True:
        done, _ = await asyncio.wait({task}, timeout=POLL_S)
        if done:
            return task.result()
        if await request.is_disconnected():
            cancel.set()
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            return None


async def batched(job: Job, request: Request, first: Any) -> AsyncIterator[str | Finished | Failed]:
    """A job's events as a stream sends them: the text pieces that arrived together joined into
    one (one per HTTP chunk, at most every FLUSH_S: fewer, larger chunks leave the CPU to the
    engine), then the Finished, or the Failed. Nothing more once the client went away. The job
    is cancelled when the stream ends early (the client left, or the consumer stopped). ``first``
    may be NOTHING_YET (the stream started before the job's first event).

    The pause after each piece ends early when the answer's last event comes: the client gets
    the end of its answer at once, not up to FLUSH_S later."""
    loop = asyncio.get_running_loop()
    last_in = asyncio.Event()

    def wake() -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile (the server stopping)
            loop.call_soon_threadsafe(last_in.set)

    job.on_last = wake  # set before the first ready(): a last event put earlier is in the buffer
    buffer: deque[Any] = deque([*([] if first is NOTHING_YET else [first]), *job.ready()])
    try:
        while True:
            if not buffer:
                try:
                    event = await next_event(job, request)
                except Failed as exc:
                    yield exc
                    return
                buffer.extend([event, *job.ready()] if event is not None else [None])
            event = buffer.popleft()
            if event is None:
                return  # the client went away, or the generation ended without a result
            if isinstance(event, TextChunk):
                text = event.text
                while buffer and isinstance(buffer[0], TextChunk):
                    text += buffer.popleft().text
                yield text
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(last_in.wait(), FLUSH_S)
                buffer.extend(job.ready())
            elif isinstance(event, Finished):
                yield event
                return
    finally:
        job.on_last = None
        job.cancel.set()
