"""A chat's messages and the tools offered to the model, as the engine takes them (OpenAI's
shapes, which chat templates read), and the embeddings it gives back: llama-free, re-exported by
:mod:`~desktop_app.engine.api`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict


@dataclass(frozen=True)
class Embeddings:
    """Sentence embeddings: one unit vector per text, in order, and the tokens the texts took."""

    vectors: list[list[float]]
    tokens: int


class FunctionCall(TypedDict):
    """The function a tool call names and its arguments, a JSON text (as OpenAI sends them)."""

    name: str
    arguments: str


class MessageToolCall(TypedDict):
    """One call an assistant message made: ``{"id", "type": "function", "function"}``."""

    id: str
    type: str
    function: FunctionCall


class _MessageText(TypedDict):
    role: str
    content: str


# Where an image goes in a message's text: one marker per entry of ``Message["images"]``, in order
# (llama.cpp's multimodal library's own default marker, so the rendered prompt is handed to it as is).
IMAGE_MARKER = "<__media__>"


class Message(_MessageText, total=False):
    """One chat message as the engine takes it (role: system, user, assistant or tool). An
    assistant message may carry the ``tool_calls`` it made; a ``tool`` message is the result of
    the call ``tool_call_id`` names (``name``: the function's). A user message may carry
    ``images``: encoded image files (PNG, JPEG, ...), each where an :data:`IMAGE_MARKER` stands
    in its ``content``, in order; only a target with a vision projector reads them."""

    tool_calls: list[MessageToolCall]
    tool_call_id: str
    name: str
    images: list[bytes]


class Tool(TypedDict):
    """A function the model may call, as OpenAI declares it and chat templates read it:
    ``{"type": "function", "function": {"name", "description", "parameters": JSON schema}}``."""

    type: str
    function: dict[str, Any]
