"""A target's vision projector (``mmproj``) through llama.cpp's multimodal library, ``mtmd``.

A vision model is a text model and a projector file beside it: the projector turns an image into
a run of embeddings the text model reads at consecutive positions, as if they were tokens. The
engine's prompt stays a list of token ids (the KV cache's record, the prompt cache and the
drafters all work on it), so an image's positions hold a **placeholder id**: a negative number,
never a vocabulary id, derived from a hash of the image's file. Two different images never share
a cached prefix, the same image in the next turn does, a saved prompt state is restored only
where its images are the prompt's own, and a drafter proposing a placeholder has it cut off
(docs/vision.md).

:class:`Projector` loads the file on the target's weights (``mtmd_init_from_file``), turns an
image into :class:`ImageTokens` (decoded by :func:`~desktop_app.engine.images.decode_rgb`, never
by llama.cpp's own decoder) and reads it into the target's context at a position
(``mtmd_helper_eval_chunk_single``), a slice at a time. :class:`MediaSpans` says where a
prompt's images sit.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import llama_cpp
from llama_cpp import mtmd_cpp as mtmd

from desktop_app.engine.errors import DecodeError, EngineError, ModelLoadError
from desktop_app.engine.images import ImageError, decode_rgb
from desktop_app.engine.llama.backend import LOG_CALLBACK, load_failure_reason
from desktop_app.engine.llama.gguf_file import read_gguf
from desktop_app.engine.messages import IMAGE_MARKER
from desktop_app.engine.projector_names import PROJECTOR_NAME, paired_projector

log = logging.getLogger(__name__)

RECENT_IMAGES = 16  # images kept tokenized (a conversation's images come back with every turn)
_PLACEHOLDER_BITS = 30  # ids -2 .. -(2**30 + 1): int32, and never -1 (a sentinel in the n-gram tables)


def placeholder_id(data: bytes) -> int:
    """The id an image's positions hold in the prompt: negative, from a hash of its file."""
    digest = int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")
    return -2 - (digest & ((1 << _PLACEHOLDER_BITS) - 1))


def is_placeholder(token: int) -> bool:
    return token < 0


class ImageTokens:
    """One image as a prompt holds it: its ``tokens`` (the text ids its projector wraps it in,
    such as Gemma 3's ``<start_of_image>``, and ``id`` at each position of its embeddings), and
    its ``slices``: the runs of embeddings, each (positions, mtmd chunk), in order (most
    projectors make one; those that cut a large image into tiles, one per tile). Owns the chunks
    (the preprocessed pixels) until it is dropped."""

    def __init__(self, id: int, tokens: list[int], slices: list[tuple[int, Any]], chunks: Any) -> None:
        self.id = id
        self.tokens = tokens
        self.slices = slices
        self._chunks = chunks  # mtmd_input_chunks *, which owns the slices' chunks

    @property
    def n(self) -> int:
        """The positions its embeddings take."""
        return sum(n for n, _ in self.slices)

    def __del__(self) -> None:  # pragma: no cover - best effort (interpreter exit)
        try:
            if self._chunks is not None:
                mtmd.mtmd_input_chunks_free(self._chunks)
                self._chunks = None
        except Exception:  # noqa: BLE001 - at interpreter exit the library may be gone
            pass


def projector_beside(model_path: Path, n_embd: int) -> Path | None:
    """The projector file beside a model that fits it: of the ``*mmproj*.gguf`` files in its
    folder that hold a vision encoder whose embeddings are ``n_embd`` wide (the converter writes
    the text model's width as ``clip.vision.projection_dim``), the one named after the model
    (``mmproj-<model stem>.gguf``, as the catalog saves it), else the first by name."""
    names = sorted(p for p in model_path.parent.glob("*.gguf") if PROJECTOR_NAME in p.name.lower() and p != model_path)
    own = paired_projector(model_path).name
    names.sort(key=lambda p: p.name != own)  # stable: the model's own first, then the rest by name
    for path in names:
        try:
            info = read_gguf(path)
        except EngineError:
            continue
        if info.architecture != "clip" or not info.get("clip.has_vision_encoder", False):
            continue
        if info.get("clip.vision.projection_dim") == n_embd:
            return path
    return None


class Projector:
    """A vision projector loaded on a target's weights (``model``: its ``llama_model *``)."""

    def __init__(self, path: Path, model: Any, n_threads: int, use_gpu: bool) -> None:
        self.path = path
        mtmd.mtmd_helper_log_set(LOG_CALLBACK, ctypes.c_void_p(0))  # its log with llama.cpp's, not on stderr
        params = mtmd.mtmd_context_params_default()
        params.use_gpu = use_gpu
        params.n_threads = n_threads
        params.print_timings = False
        params.warmup = False
        params.media_marker = IMAGE_MARKER.encode()
        self._ctx = mtmd.mtmd_init_from_file(str(path).encode(), model, params)
        if not self._ctx:
            raise ModelLoadError(f"llama.cpp could not load the vision projector {path.name}: {load_failure_reason()}")
        if not mtmd.mtmd_support_vision(self._ctx):
            self.close()
            raise ModelLoadError(f"{path.name} is not a vision projector (it has no image encoder)")
        if mtmd.mtmd_decode_use_mrope(self._ctx):
            self.close()  # an image's positions are 2-D there (Qwen2-VL, Qwen2.5-VL, Qwen3-VL): not one per token
            raise ModelLoadError(
                f"{path.name} places images with M-RoPE (Qwen-VL models), which SpecChat does not support yet"
            )
        self._recent: OrderedDict[int, ImageTokens] = OrderedDict()

    def close(self) -> None:
        self._recent = OrderedDict()
        if self._ctx:
            mtmd.mtmd_free(self._ctx)
            self._ctx = None

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit the library may be gone
            pass

    def image(self, data: bytes) -> ImageTokens:
        """The image's tokens (ImageError: a file that is not a usable image, in one line)."""
        key = placeholder_id(data)
        found = self._recent.get(key)
        if found is not None:
            self._recent.move_to_end(key)
            return found
        rgb = decode_rgb(data)  # the safe decoder: headers checked, bombs refused, scaled down
        pixels = (ctypes.c_uint8 * len(rgb.pixels)).from_buffer_copy(rgb.pixels)
        bitmap = mtmd.mtmd_bitmap_init(rgb.width, rgb.height, pixels)
        if not bitmap:
            raise ImageError("the image could not be handed to the vision projector")
        chunks = mtmd.mtmd_input_chunks_init()
        marker = IMAGE_MARKER.encode()
        text = mtmd.mtmd_input_text(marker, len(marker), False, True)
        try:
            rc = mtmd.mtmd_tokenize(self._ctx, chunks, ctypes.byref(text), (mtmd.mtmd_bitmap_p_ctypes * 1)(bitmap), 1)
        finally:
            mtmd.mtmd_bitmap_free(bitmap)
        if rc != 0:
            mtmd.mtmd_input_chunks_free(chunks)
            raise ImageError(f"the vision projector could not read the image (mtmd_tokenize returned {rc})")
        image = _image_tokens(key, chunks)
        self._recent[key] = image
        while len(self._recent) > RECENT_IMAGES:
            self._recent.popitem(last=False)
        return image

    def decode(self, ctx: Any, chunk: Any, pos: int, n_batch: int) -> None:
        """Encode a slice of an image (its mtmd chunk) and decode its embeddings into ``ctx`` at
        positions ``pos``... (seq 0)."""
        new_pos = llama_cpp.llama_pos(0)
        rc = mtmd.mtmd_helper_eval_chunk_single(self._ctx, ctx, chunk, pos, 0, n_batch, False, ctypes.byref(new_pos))
        if rc != 0:
            raise DecodeError(f"the image could not be read into the context (mtmd returned {rc})")


def _image_tokens(key: int, chunks: Any) -> ImageTokens:
    """An image's tokens from its tokenization: text chunks' ids, and ``key`` for each position of
    its image chunks."""
    tokens: list[int] = []
    slices: list[tuple[int, Any]] = []
    for i in range(mtmd.mtmd_input_chunks_size(chunks)):
        chunk = mtmd.mtmd_input_chunks_get(chunks, i)
        kind = mtmd.mtmd_input_chunk_get_type(chunk)
        if kind == mtmd.MTMD_INPUT_CHUNK_TYPE_TEXT:
            size = ctypes.c_size_t(0)
            ids = mtmd.mtmd_input_chunk_get_tokens_text(chunk, ctypes.byref(size))
            tokens.extend(int(ids[j]) for j in range(size.value))
            continue
        n, n_pos = int(mtmd.mtmd_input_chunk_get_n_tokens(chunk)), int(mtmd.mtmd_input_chunk_get_n_pos(chunk))
        if kind != mtmd.MTMD_INPUT_CHUNK_TYPE_IMAGE or n != n_pos:  # pragma: no cover - refused at load (M-RoPE)
            mtmd.mtmd_input_chunks_free(chunks)
            raise ImageError(f"the image takes {n} tokens at {n_pos} positions, which SpecChat does not support")
        tokens.extend([key] * n)
        slices.append((n, chunk))
    if not slices:  # pragma: no cover - mtmd gives image chunks for a bitmap
        mtmd.mtmd_input_chunks_free(chunks)
        raise ImageError("the vision projector gave no image tokens")
    return ImageTokens(key, tokens, slices, chunks)


@dataclass(frozen=True)
class MediaSpans:
    """Where a prompt's images sit: the position where each slice of their embeddings starts,
    with its length and mtmd chunk, and the projector that reads them into the context."""

    projector: Projector
    starts: dict[int, tuple[int, Any]]

    @classmethod
    def of(cls, projector: Projector, tokens: list[int], images: dict[int, ImageTokens]) -> MediaSpans:
        starts: dict[int, tuple[int, Any]] = {}
        next_slice: dict[int, int] = {}  # per image, its slice the next run of its id is
        i = 0
        while i < len(tokens):
            image = images.get(tokens[i]) if tokens[i] < 0 else None
            if image is None:
                i += 1
                continue
            k = next_slice.get(image.id, 0)
            next_slice[image.id] = (k + 1) % len(image.slices)
            starts[i] = image.slices[k]
            i += image.slices[k][0]
        return cls(projector, starts)

    def boundary(self, keep: int) -> int:
        """``keep`` moved back to the start of the slice it falls inside (a slice is read whole)."""
        for start, (n, _) in self.starts.items():
            if start < keep < start + n:
                return start
        return keep

    def runs(self, begin: int, end: int) -> Iterator[tuple[int, int, Any]]:
        """[begin, end) cut into runs of text (chunk None) and whole slices, in order."""
        pos = begin
        for start in sorted(s for s in self.starts if begin <= s < end):
            if start > pos:
                yield pos, start, None
            n, chunk = self.starts[start]
            yield start, start + n, chunk
            pos = start + n
        if pos < end:
            yield pos, end, None


def open_projector(
    explicit: Path | None, model_path: Path, n_embd: int, model: Any, n_threads: int, use_gpu: bool
) -> tuple[Projector | None, str]:
    """A target's projector and a line on it: the file the options name (ModelLoadError when it
    cannot load), else the one beside the model that fits (one that cannot load is passed over,
    its reason in the line); (None, "") when there is none."""
    if explicit is not None:
        return Projector(explicit, model, n_threads, use_gpu), ""
    found = projector_beside(model_path, n_embd)
    if found is None:
        return None, ""
    try:
        return Projector(found, model, n_threads, use_gpu), ""
    except ModelLoadError as exc:
        log.warning("vision projector passed over: %s", exc)
        return None, str(exc)
