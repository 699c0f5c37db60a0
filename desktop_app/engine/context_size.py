"""The context's size: how many tokens a prompt takes, what a token of context costs in memory,
and whether a larger context would fit this machine. Llama-free (the window reads it).

- :class:`PromptSize`: what the engine counted for a chat request (``Engine.count_prompt``);
- :func:`available_memory`: the RAM the OS could give now;
- :func:`raise_offer`: the larger context worth offering, with the numbers that justify it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from desktop_app.engine.api import N_CTX, ModelInfo

MEMORY_SHARE = 0.8  # a larger context may take at most this share of the memory available now
KV_BYTES = 2  # llama.cpp's KV cache holds f16 keys and values unless told otherwise


@dataclass(frozen=True)
class PromptSize:
    """How many tokens a chat request's prompt takes: what the next prompt would be (the oldest
    ``dropped`` messages left out when the conversation does not fit), the context, and the
    most a prompt may take (``limit``: the context less the room kept for the answer)."""

    tokens: int
    n_ctx: int
    limit: int
    dropped: int = 0

    @property
    def over(self) -> bool:
        """The conversation does not fit whole: messages are left out, or even the last is too long."""
        return self.dropped > 0 or self.tokens > self.limit


def available_memory() -> int | None:
    """Bytes of RAM the OS could give us now (Linux MemAvailable; None when unknown)."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def kv_bytes_per_token(metadata: dict[str, object], architecture: str) -> int:
    """An estimate of the KV cache's bytes per context token from a GGUF's metadata: per layer,
    the key and value heads times their widths, in f16 (0 when the metadata does not say).
    Layers without attention (recurrent ones list 0 KV heads) cost nothing here."""

    def value(name: str) -> object:
        return metadata.get(f"{architecture}.{name}")

    layers, width, heads = value("block_count"), value("embedding_length"), value("attention.head_count")
    if not isinstance(layers, int) or layers <= 0:
        return 0
    kv_heads = value("attention.head_count_kv")
    per_layer = kv_heads if isinstance(kv_heads, list) else [kv_heads if isinstance(kv_heads, int) else heads] * layers
    head_width = width // heads if isinstance(width, int) and isinstance(heads, int) and heads > 0 else 0
    key, val = value("attention.key_length"), value("attention.value_length")
    key = key if isinstance(key, int) else head_width
    val = val if isinstance(val, int) else head_width
    return sum(h * (key + val) * KV_BYTES for h in per_layer if isinstance(h, int))


@dataclass(frozen=True)
class RaiseOffer:
    """A larger context this machine can hold: ``n_ctx`` tokens, ``extra_bytes`` more memory."""

    n_ctx: int
    current: int
    extra_bytes: int
    available_bytes: int
    bytes_per_token: int

    @property
    def explanation(self) -> str:
        return (
            f"The model was trained for up to {self.n_ctx:,} tokens of context. At {self.n_ctx:,} its cache "
            f"takes about {_size(self.extra_bytes)} more memory than at {self.current:,} "
            f"({_size(self.bytes_per_token)} per token, estimated from its layers and heads); "
            f"{_size(self.available_bytes)} is available now. The model reloads."
        )


def raise_offer(target: ModelInfo, draft: ModelInfo | None = None, available: int | None = None) -> RaiseOffer | None:
    """The largest context up to the target's trained one that fits in MEMORY_SHARE of the
    memory available (halving from the trained size), or None when none is larger than now
    (or the model does not say what it was trained for or what its cache costs)."""
    per_token = target.kv_bytes_per_token + (draft.kv_bytes_per_token if draft is not None else 0)
    available = available_memory() if available is None else available
    if target.n_ctx_train <= target.n_ctx or target.kv_bytes_per_token <= 0 or available is None:
        return None
    n_ctx = min(target.n_ctx_train, N_CTX.high)
    while n_ctx > target.n_ctx:
        extra = (n_ctx - target.n_ctx) * per_token
        if extra <= available * MEMORY_SHARE:
            return RaiseOffer(n_ctx, target.n_ctx, extra, available, per_token)
        n_ctx //= 2
    return None


def _size(n_bytes: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{n_bytes} bytes"
