"""The images of the request being built, and what speculation does with them.

A message carries its images as files, one :data:`IMAGE_MARKER` for each in its text. Before the
chat template renders the conversation, each marker becomes a marker that names its image (the
image's placeholder id, :func:`~desktop_app.engine.llama.vision.placeholder_id`), so the rendered
text tells images apart: the answer memory, which reuses a turn's tokens when a later prompt
starts with its text, then never takes one image's tokens for another's. Tokenizing the rendered
text splices each image's tokens (its placeholders, and the text ids its projector wraps it in)
where its marker stands; the text between is tokenized as any prompt is.

Drafting on such a prompt (docs/vision.md): the model-free drafters look up the text as usual and
a proposal is cut before any placeholder (:func:`cut_at_image`); a draft model drafts from the
text with the images left out (:class:`TextOnlyDrafter`); the drafters that read the target's
hidden rows (MTP, Gemma 4 assistant) stand aside for the answer, which the stats say.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from desktop_app.engine.api import Message, SamplingParams
from desktop_app.engine.drafters import CostProbe, Draft, Drafter, Hidden
from desktop_app.engine.errors import EngineError
from desktop_app.engine.images import ImageError
from desktop_app.engine.llama.model import LlamaModel
from desktop_app.engine.llama.vision import ImageTokens, MediaSpans, is_placeholder
from desktop_app.engine.messages import IMAGE_MARKER
from desktop_app.engine.sampling_noise import SamplingNoise

_KEYED = "<__media_{}__>"
_KEYED_RE = re.compile(r"<__media_(-\d+)__>")
HIDDEN_ASIDE = "MTP and assistant drafting stand aside for prompts with images"


def no_projector(target: LlamaModel) -> str:
    """Why ``target`` cannot see images, in one line."""
    if target.vision_note:
        return f"{target.name} cannot see images: {target.vision_note}"
    return (
        f"{target.name} cannot see images: no vision projector (mmproj) found beside it; put the model's "
        "mmproj .gguf file in the same folder (or name it with --mmproj), or choose a vision model"
    )


class RequestImages:
    """The images of the request the prompt builder is on (none: every path is the text one)."""

    def __init__(self) -> None:
        self.images: dict[int, ImageTokens] = {}  # by placeholder id

    @property
    def active(self) -> bool:
        return bool(self.images)

    def clear(self) -> None:
        self.images = {}

    def keyed(self, target: LlamaModel, messages: Sequence[Message]) -> list[Message]:
        """The messages with each image marker naming its image, the images tokenized; the
        messages as they are when none has images. EngineError: images for a target without a
        projector, markers that do not match the images, an image that cannot be read."""
        self.images = {}
        if not any(isinstance(m, dict) and m.get("images") for m in messages):
            return list(messages)
        projector = target.projector
        if projector is None:
            raise EngineError(no_projector(target))
        out: list[Message] = []
        for i, message in enumerate(messages, start=1):
            images = message.get("images") or [] if isinstance(message, dict) else []
            content = message.get("content") if isinstance(message, dict) else None
            if not images or not isinstance(content, str):
                out.append(message)
                continue
            pieces = content.split(IMAGE_MARKER)
            if len(pieces) - 1 != len(images):
                raise EngineError(
                    f"message {i} has {len(images)} image(s) but {len(pieces) - 1} image marker(s) "
                    f"({IMAGE_MARKER}) in its text: one marker per image, where it goes"
                )
            text = pieces[0]
            for n, (data, piece) in enumerate(zip(images, pieces[1:], strict=True), start=1):
                try:
                    image = projector.image(bytes(data))
                except ImageError as exc:
                    raise ImageError(f"image {n} of message {i}: {exc}") from None
                self.images[image.id] = image
                text += _KEYED.format(image.id) + piece
            out.append({**message, "content": text})
        return out

    def tokenize(self, tokenize: Callable[[str, bool], list[int]], text: str, add_special: bool) -> list[int]:
        """``text`` tokenized with ``tokenize(text, add_special)``, each image's tokens where its
        marker stands (the text between images tokenized apart, as llama.cpp's mtmd does)."""
        parts = _KEYED_RE.split(text)
        out = tokenize(parts[0], add_special) if parts[0] or add_special else []
        for i in range(1, len(parts), 2):
            image = self.images.get(int(parts[i]))
            out += image.tokens if image is not None else tokenize(_KEYED.format(parts[i]), False)
            if parts[i + 1]:
                out += tokenize(parts[i + 1], False)
        return out

    def spans(self, target: LlamaModel, tokens: list[int]) -> MediaSpans | None:
        """Where the images sit in the built prompt (None: a text prompt)."""
        if not self.images or target.projector is None:
            return None
        return MediaSpans.of(target.projector, tokens, self.images)


def text_only(tokens: Sequence[int]) -> list[int]:
    """The tokens with the images' placeholders left out."""
    return [t for t in tokens if not is_placeholder(t)]


def cut_at_image(tokens: list[int]) -> None:
    """Cut a proposal before its first placeholder: an image is never drafted."""
    for i, token in enumerate(tokens):
        if is_placeholder(token):
            del tokens[i:]
            return


def learnable_turn(prompt: list[int], new: int, media: MediaSpans | None) -> tuple[list[int], int]:
    """A turn's prompt and new-token count as the n-gram cache may learn them: without images."""
    if media is None:
        return prompt, new
    kept = text_only(prompt[len(prompt) - new :])
    return text_only(prompt[: len(prompt) - new]) + kept, len(kept)


def for_images(drafters: list[Drafter], images: bool) -> tuple[list[Drafter], str]:
    """The drafters for a prompt (with ``images`` or not), and why some stand aside ("": none does)."""
    if not images:
        return drafters, ""
    out: list[Drafter] = []
    for drafter in drafters:
        if drafter.needs_hidden:
            continue
        out.append(drafter if drafter.free else TextOnlyDrafter(drafter))
    return out, HIDDEN_ASIDE if len(out) < len(drafters) else ""


class TextOnlyDrafter(Drafter):
    """A drafter that runs a model (a draft model) on the context with the images left out: it
    cannot see them, and its own cache then holds only text."""

    def __init__(self, inner: Drafter) -> None:
        self.inner = inner
        self.kind = inner.kind
        self.free = inner.free

    def prepare(self, context: list[int], hidden: Hidden | None) -> None:
        self.inner.prepare(text_only(context), None)

    def draft(self, context: list[int], k: int, params: SamplingParams, noise: SamplingNoise, p_min: float) -> Draft:
        return self.inner.draft(text_only(context), k, params, noise, p_min)

    def accepted(self, tokens: list[int], hidden: np.ndarray | None) -> None:
        self.inner.accepted(tokens, None)

    def settle(self, cached: list[int]) -> None:
        self.inner.settle(text_only(cached))

    def token_cost_s(self, probe: CostProbe) -> float:
        return self.inner.token_cost_s(probe)
