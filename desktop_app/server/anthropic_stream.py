"""Anthropic's streamed Message: ``message_start`` at once (its usage: the prompt's tokens, once
the engine has made the prompt), the content blocks in order (a thinking block while the model
reasons, then the text block, then a ``tool_use`` block per call), each opened, filled by deltas
and stopped, then ``message_delta`` (the stop reason, the usage, and ours: ``timings``, any
``warnings``) and ``message_stop``. The blocks add up to the Message the same request gets whole;
``ping`` events come while there is nothing else to send (keep_alive.py)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from desktop_app.engine.api import FinishReason
from desktop_app.engine.events import Finished, PromptProgress
from desktop_app.engine.reasoning import ReasoningFormat, SectionStream
from desktop_app.engine.stats import GenerationStats
from desktop_app.server.answer_notes import noted
from desktop_app.server.anthropic_thinking import SIGNATURE
from desktop_app.server.anthropic_tools import tool_use_events
from desktop_app.server.backend import Failed, Job
from desktop_app.server.jobs import batched
from desktop_app.server.tool_use import NO_TOOLS, CallStream, ToolUse

Event = Callable[[str, dict[str, Any]], str]
THINKING, TEXT = "thinking", "text"
_OPENING = {THINKING: {"type": THINKING, "thinking": "", "signature": ""}, TEXT: {"type": TEXT, "text": ""}}
_DELTA = {THINKING: "thinking_delta", TEXT: "text_delta"}


def sse_event(name: str, payload: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps({'type': name, **payload}, ensure_ascii=False)}\n\n"


@dataclass
class BlockStream:
    """The streamed thinking and text blocks: at most one open; a new kind stops the open one
    and starts the next index. ``shown`` False: thinking blocks without their text."""

    shown: bool = True
    index: int = -1
    open: str | None = None

    def write(self, kind: str, delta: str) -> Iterator[str]:
        """The events for ``delta`` of a ``kind`` block (nothing for an empty one)."""
        if not delta:
            return
        if self.open != kind:
            yield from self.close()
            self.index, self.open = self.index + 1, kind
            yield sse_event("content_block_start", {"index": self.index, "content_block": _OPENING[kind]})
        if kind == TEXT or self.shown:
            key = "text" if kind == TEXT else "thinking"
            yield sse_event("content_block_delta", {"index": self.index, "delta": {"type": _DELTA[kind], key: delta}})

    def close(self) -> Iterator[str]:
        """The open block's end (a thinking block's signature first)."""
        if self.open == THINKING:
            delta = {"type": "signature_delta", "signature": SIGNATURE}
            yield sse_event("content_block_delta", {"index": self.index, "delta": delta})
        if self.open is not None:
            yield sse_event("content_block_stop", {"index": self.index})
        self.open = None

    def end(self, called: bool) -> Iterator[str]:
        """The last block stopped; an answer with no block at all and no call gets an empty text
        block, as its whole Message has."""
        if self.index < 0 and not called:
            self.index, self.open = 0, TEXT
            yield sse_event("content_block_start", {"index": 0, "content_block": _OPENING[TEXT]})
        yield from self.close()


def stop_reason(stats: GenerationStats, called: bool = False) -> tuple[str, str | None]:
    """(stop_reason, stop_sequence) in Anthropic's words; an answer that ``called`` tools
    stopped for that, unless a limit cut it (its last call, unfinished, dropped)."""
    if stats.finish_reason in (FinishReason.LENGTH, FinishReason.CONTEXT_FULL):
        return "max_tokens", None
    if called:
        return "tool_use", None
    if stats.stop_string:
        return "stop_sequence", stats.stop_string
    return "end_turn", None


def cut(stats: GenerationStats) -> bool:
    """A limit ended the answer (max_tokens, or the context full)."""
    return stats.finish_reason in (FinishReason.LENGTH, FinishReason.CONTEXT_FULL)


def usage(stats: GenerationStats) -> dict[str, int]:
    return {"input_tokens": stats.prompt_tokens, "output_tokens": stats.generated_tokens}


async def message_events(
    job: Job, request: Request, first: Any, opening: dict[str, Any], answer: AnswerParts
) -> AsyncIterator[str]:
    """The streamed events of the Message ``opening`` (its id, model...) as the job writes it."""
    prompt = first.total if isinstance(first, PromptProgress) else 0  # 0: still queued behind another answer
    start_usage = {"input_tokens": prompt, "output_tokens": 0}
    yield sse_event(
        "message_start", {"message": {**opening, "stop_reason": None, "stop_sequence": None, "usage": start_usage}}
    )
    sections, calls, blocks = SectionStream(answer.reasoning), CallStream(answer.tools), BlockStream(answer.shown)
    async for item in batched(job, request, first):
        if isinstance(item, Failed):
            yield sse_event("error", {"error": {"type": "api_error", "message": str(item)}})
            return
        final = isinstance(item, Finished)
        reasoning, text = sections.push("" if final else str(item), final=final)
        text, _ = calls.push(text, final=final, cut=isinstance(item, Finished) and cut(item.stats))
        for kind, delta in ((THINKING, reasoning), (TEXT, text)):
            for line in blocks.write(kind, delta):
                yield line
        if isinstance(item, Finished):
            for line in blocks.end(called=bool(calls.calls)):
                yield line
            for index, call in enumerate(calls.calls, start=blocks.index + 1):
                for line in tool_use_events(call, index, sse_event):
                    yield line
            reason, sequence = stop_reason(item.stats, bool(calls.calls))
            ending = {"delta": {"stop_reason": reason, "stop_sequence": sequence}, "usage": usage(item.stats)}
            yield sse_event("message_delta", noted(ending, item.stats))
            yield sse_event("message_stop", {})


@dataclass(frozen=True)
class AnswerParts:
    """How an answer is cut into blocks: the model's reasoning markers (None: all of it is text),
    whether thinking is shown, and the request's tools."""

    reasoning: ReasoningFormat | None = None
    shown: bool = True
    tools: ToolUse = NO_TOOLS
