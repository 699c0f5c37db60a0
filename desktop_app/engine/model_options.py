"""How a model is loaded: :class:`ModelOptions` and the numeric load parameters, declared once.

Llama-free (re-exported by :mod:`desktop_app.engine.api`): the settings, the CLI's arguments and
the window's fields read the ranges and defaults from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from desktop_app.engine.ranges import NumberRange
from desktop_app.engine.workers import LayerSplit, WorkerAddress

N_CTX = NumberRange("n_ctx", int, 32, 1 << 20, 4096, "Context size in tokens")
NGPU_LAYERS = NumberRange("n_gpu_layers", int, -1, 9999, -1, "Layers offloaded to the GPU (-1 all, 0 none)")
_THREADS = "CPU threads for the engine; 0: the fastest count, measured as the machine's load changes"
N_THREADS = NumberRange("n_threads", int, 0, 1024, 0, _THREADS)
# 1 GiB: about 18 conversations of 2,500 tokens on the built-in model (23 KiB of KV a token), or
# 8,000 tokens of a 7-8B model with grouped-query attention (128 KiB a token); taken only as
# prompts are saved (docs/prompt-cache.md).
_PROMPT_CACHE = (
    "Memory in MiB for the KV states of recent prompts, per loaded model, so switching between "
    "long conversations does not read them again; 0: off"
)
PROMPT_CACHE_MB = NumberRange("prompt_cache_mb", int, 0, 1 << 20, 1024, _PROMPT_CACHE)
MIB = 1 << 20


@dataclass(frozen=True)
class ModelOptions:
    """Per-model load settings (target and draft each have their own)."""

    n_gpu_layers: int = NGPU_LAYERS.default  # -1: every layer the backend can take; 0: CPU only
    n_ctx: int = N_CTX.default
    n_batch: int = 512
    n_threads: int | None = None  # None: chosen for this machine
    flash_attn: bool | None = None  # None: model.default_flash_attn (off on the CPU of our builds)
    # Other computers running `specchat worker` that hold part of the layers (the target only),
    # in the proportions of ``split``; ``n_gpu_layers`` then applies to this machine's own GPU.
    workers: tuple[WorkerAddress, ...] = ()
    split: LayerSplit = field(default_factory=LayerSplit)
    prompt_cache_mb: int = PROMPT_CACHE_MB.default  # the model's PromptStore budget (0: none)
    # The vision projector (mmproj) a target sees images with; None: one beside it that fits, if any
    mmproj: Path | None = None

    def __post_init__(self) -> None:
        NGPU_LAYERS.check(self.n_gpu_layers)
        N_CTX.check(self.n_ctx)
        PROMPT_CACHE_MB.check(self.prompt_cache_mb)
        object.__setattr__(self, "workers", tuple(self.workers))
        if self.workers:
            self.split.shares(len(self.workers))  # a split that does not fit the workers fails here
        if self.n_threads is not None and N_THREADS.check(self.n_threads) == 0:
            object.__setattr__(self, "n_threads", None)

    @property
    def prompt_cache_bytes(self) -> int:
        return self.prompt_cache_mb * MIB
