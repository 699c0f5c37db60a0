"""An answer that may call tools, as the window gets it: its text streams without the calls'
syntax (a call being written is held back, never shown and then taken away), and when it ends the
calls come parsed, each with an id, in the request's message shape."""

from __future__ import annotations

from desktop_app.engine.api import MessageToolCall
from desktop_app.engine.events import TextChunk
from desktop_app.engine.tool_calls import ToolFormat, parse_tool_calls


class ToolAnswer:
    """Feed it the answer's chunks (:meth:`shown` gives what may be shown of each), then the final
    text (:meth:`finish`: the answer without its calls, and the calls)."""

    def __init__(self, fmt: ToolFormat) -> None:
        self.format = fmt
        self.text = ""
        self.sent = 0  # characters of the plain answer already shown

    def shown(self, chunk: TextChunk) -> TextChunk | None:
        """The part of ``chunk`` that is plain answer and cannot become a call (None: nothing yet)."""
        self.text += chunk.text
        content = parse_tool_calls(self.text, self.format, partial=True).content
        # Only a prefix the raw text shares is safe to show: what follows may still turn into a call.
        safe = self.sent
        while safe < len(content) and safe < len(self.text) and content[safe] == self.text[safe]:
            safe += 1
        if safe <= self.sent:
            return None
        new, self.sent = self.text[self.sent : safe], safe
        return TextChunk(new, chunk.from_draft, chunk.drafter)

    def finish(self, text: str) -> tuple[str, tuple[MessageToolCall, ...]]:
        parsed = parse_tool_calls(text, self.format)
        calls = tuple(
            MessageToolCall(
                id=c.id or self.format.new_call_id(),
                type="function",
                function={"name": c.name, "arguments": c.arguments or "{}"},
            )
            for c in parsed.calls
        )
        return (parsed.content if calls else text), calls
