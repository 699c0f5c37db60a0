"""Keep-alives for streamed answers: a client that hears nothing for a while takes the server
for gone (Node's fetch gives up after 300 s without a byte, qwen-code after 120 s) and sends its
whole request again, so a stream with nothing to send (its request queued behind another, a long
prompt being read, a tool call's arguments being written) sends something every few seconds.

OpenAI's endpoints send an SSE comment, which every SSE client skips (``: reading the prompt
1234/20000 tokens``); Anthropic's ``/v1/messages`` sends its ``ping`` event, with the same
comment in its block.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from desktop_app.server.backend import Job

ANTHROPIC_PING = 'event: ping\ndata: {"type": "ping"}\n\n'


def progress_note(job: Job) -> str:
    """Where the job is, as a comment line says it."""
    progress = job.progress
    if progress is None:
        return "waiting for the engine"
    if progress.done < progress.total:
        return f"reading the prompt {progress.done}/{progress.total} tokens"
    return "writing the answer"


def openai_ping(job: Job) -> str:
    """An SSE comment (a block of its own, which dispatches no event)."""
    return f": {progress_note(job)}\n\n"


def anthropic_ping(job: Job) -> str:
    """Anthropic's ``ping`` event, the comment a line of its block."""
    return f": {progress_note(job)}\n{ANTHROPIC_PING}"


class _End:
    """The events ran out."""


_END = _End()


async def _next(events: AsyncIterator[str]) -> str | _End:
    try:
        return await anext(events)
    except StopAsyncIteration:
        return _END


async def kept_alive(events: AsyncIterator[str], every_s: float, ping: Callable[[], str]) -> AsyncIterator[str]:
    """``events`` as they come, with ``ping()`` whenever none came for ``every_s``. The events'
    generator is closed (its job cancelled) when this one is (the client went away)."""
    pending: asyncio.Task[Any] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(_next(events))
            done, _ = await asyncio.wait({pending}, timeout=every_s)
            if not done:
                yield ping()
                continue
            item, pending = pending.result(), None
            if isinstance(item, _End):
                return
            yield item
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()
