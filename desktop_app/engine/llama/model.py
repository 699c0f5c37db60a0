"""One GGUF model with its context, on llama.cpp's low-level API.

A :class:`LlamaModel` owns a model, a context, a reusable batch and a record of which tokens its
KV cache holds, so callers can reuse a cached prefix (a new chat turn decodes only new tokens)
and trim rejected draft tokens. One thread at a time may use it.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np

from desktop_app.engine.api import ModelOptions
from desktop_app.engine.context_size import available_memory
from desktop_app.engine.errors import ModelLoadError
from desktop_app.engine.llama import rpc
from desktop_app.engine.llama.backend import (
    clear_log,
    cpu_has_inexact_llamafile,
    ensure_backend,
    load_failure_reason,
)
from desktop_app.engine.llama.drafting import has_mtp_layers
from desktop_app.engine.llama.gguf_file import GGUFInfo, read_gguf
from desktop_app.engine.llama.kv_cache import KvCache
from desktop_app.engine.llama.prompt_cache import PromptStore
from desktop_app.engine.llama.rpc import Placement
from desktop_app.engine.llama.threads import default_threads
from desktop_app.engine.llama.token_prefix import common_prefix as common_prefix  # where drafters import it from
from desktop_app.engine.llama.vision import Projector, open_projector
from desktop_app.engine.llama.vocab import VocabProperties

ProgressFn = Callable[[float], None]

# Recurrent/hybrid targets whose architecture supports it keep this many recurrent-state
# snapshots, so up to this many rejected draft tokens can be undone (llama.cpp's n_rs_seq; each
# costs one copy of the recurrent state). Speculation on them drafts at most this many tokens.
ROLLBACK_TOKENS = 16


def load_weights(
    path: Path,
    options: ModelOptions,
    progress: ProgressFn | None,
    load_mtp: bool = False,
    placement: Placement | None = None,
) -> Any:
    """``llama_model_load_from_file`` with our options and a progress callback; raises ModelLoadError.

    With a ``placement`` the layers go to its devices (workers, local GPUs) in its proportions;
    without one, to llama.cpp's default devices (never a worker: they are not registered)."""
    mparams = llama_cpp.llama_model_default_params()
    mparams.n_gpu_layers = options.n_gpu_layers if options.n_gpu_layers >= 0 else 999
    if placement is not None:
        mparams.devices = ctypes.cast(placement.devices, ctypes.c_void_p)
        mparams.tensor_split = ctypes.cast(placement.tensor_split, ctypes.POINTER(ctypes.c_float))
        mparams.n_gpu_layers = placement.n_gpu_layers
    mparams.load_mtp = load_mtp
    callback = None
    if progress is not None:

        def on_progress(fraction: float, _user: ctypes.c_void_p) -> bool:
            try:
                progress(float(fraction))
            except Exception:  # noqa: BLE001 - a UI callback must never break loading
                pass
            return True

        # Kept referenced in this frame for the whole load: llama.cpp calls it meanwhile.
        callback = llama_cpp.llama_progress_callback(on_progress)
        mparams.progress_callback = callback
    clear_log()
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), mparams)
    del callback
    if not model:
        raise ModelLoadError(f"llama.cpp could not load {path.name}: {load_failure_reason()}")
    return model


def context_params(model: Any, options: ModelOptions) -> Any:
    cparams = llama_cpp.llama_context_default_params()
    train_ctx = int(llama_cpp.llama_model_n_ctx_train(model))
    cparams.n_ctx = min(options.n_ctx, train_ctx) if train_ctx > 0 else options.n_ctx
    cparams.n_batch = options.n_batch
    cparams.n_ubatch = options.n_batch
    threads = options.n_threads or default_threads()
    cparams.n_threads = threads
    cparams.n_threads_batch = threads
    flash = options.flash_attn if options.flash_attn is not None else default_flash_attn(options)
    if flash is not None:
        cparams.flash_attn_type = 1 if flash else 0
    return cparams


def runs_on_cpu(options: ModelOptions) -> bool:
    """Whether this machine computes its share of the model on its CPU (no GPU layers)."""
    return options.n_gpu_layers == 0 or not rpc.local_gpus()


def default_flash_attn(options: ModelOptions) -> bool | None:
    """Flash attention when the user did not choose: off for a model on the CPU of a build whose
    verify passes never take llamafile's kernels, otherwise llama.cpp's choice (None).

    llama.cpp's automatic choice turns it on wherever the backend supports it, and its CPU
    kernel costs more the deeper the context: SmolLM2-135M on 2 x86 cores decoded at 60 tok/s
    354 tokens into a conversation with it and at 92 without; a 9-row verify pass 400 tokens in
    took 86-108 ms with it and 45-61 ms without. Without it, attention is two matrix products,
    and llamafile's kernels compute a row inside a batch differently from the same row alone,
    so answers with and without speculation parted at near-ties (24 of 34 greedy answers
    identical with them, 34 of 34 without): off only where llamafile cannot reach a verify pass
    (ours: `packaging/llama/prefill-gemm.patch` keeps it to prompt reading's larger batches).
    Workers holding layers compute them the same way: a target spread over computers then
    answers token for token as it does whole on this one."""
    if runs_on_cpu(options) and not cpu_has_inexact_llamafile():
        return False
    return None


class LlamaModel(KvCache, VocabProperties):
    """A model, its context and reusable batch; decoding and the cache record are :class:`KvCache`'s."""

    def __init__(
        self, path: str | Path, options: ModelOptions | None = None, progress: ProgressFn | None = None
    ) -> None:
        ensure_backend()
        self.path = Path(path)
        self.options = options or ModelOptions()
        self.info: GGUFInfo = read_gguf(self.path)
        self._check_memory()
        self._model = None
        self._ctx = None
        self._batch = None
        self._load(progress)
        self.vocab = llama_cpp.llama_model_get_vocab(self._model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self.vocab))
        self.n_ctx = int(llama_cpp.llama_n_ctx(self._ctx))
        self.n_batch = int(llama_cpp.llama_n_batch(self._ctx))  # llama.cpp may clamp it to n_ctx
        self._batch = llama_cpp.llama_batch_init(self.n_batch, 0, 1)
        self._memory = llama_cpp.llama_get_memory(self._ctx)
        self.kv_tokens: list[int] = []
        self.prompt_store = PromptStore(self.options.prompt_cache_bytes, whole_only=self.recurrent)
        self.prefill_hidden: tuple[int, np.ndarray] | None = None
        self._pieces: dict[int, bytes] = {}
        self._shown_special: set[int] = set()  # special tokens rendered as their text (see show_special)
        self._piece_buf = ctypes.create_string_buffer(256)
        self._eog = np.array([bool(llama_cpp.llama_vocab_is_eog(self.vocab, i)) for i in range(self.n_vocab)])
        self.projector: Projector | None = None  # a target's vision projector (open_projector)
        self.vision_note = ""  # why a projector beside it was passed over ("": none was)

    def open_projector(self) -> None:
        """Open the vision projector (mmproj) a target sees images with: the options' file
        (ModelLoadError when it cannot load), else one beside it that fits (llama/vision.py)."""
        width = int(llama_cpp.llama_model_n_embd_inp(self._model))
        threads = self.options.n_threads or default_threads()
        self.projector, self.vision_note = open_projector(
            self.options.mmproj, self.path, width, self._model, threads, not runs_on_cpu(self.options)
        )

    # ----------------------------------------------------------------- loading
    def _check_memory(self) -> None:
        if self.options.workers or not runs_on_cpu(self.options):
            return  # the workers and the GPU backend report their own allocation failures
        free = available_memory()
        size = self.info.file_size
        if free is not None and size > free:
            raise ModelLoadError(
                f"{self.path.name} needs about {size / 2**30:.1f} GiB of memory but only "
                f"{free / 2**30:.1f} GiB is available: choose a smaller model or quantization"
            )

    def _place(self) -> Placement | None:
        """Where the layers go when the options name workers (None: this machine only)."""
        self.remote: list[rpc.RemoteDevice] = []
        self.placement: Placement | None = None
        if not self.options.workers:
            return None
        self.remote = rpc.connect(self.options.workers)
        use_gpu = self.options.n_gpu_layers != 0
        n_layer = self.info.arch_int("block_count") or 0
        self.placement = rpc.place(n_layer, self.remote, self.options.split, rpc.local_gpus(), use_gpu)
        return self.placement

    def _load(self, progress: ProgressFn | None) -> None:
        self.has_mtp = has_mtp_layers(self.info)
        model = load_weights(self.path, self.options, progress, load_mtp=self.has_mtp, placement=self._place())
        rpc.hold(self.options.workers)  # until close(): the model's buffers keep the connections open
        self._model = model
        cparams = context_params(model, self.options)
        self.recurrent = bool(llama_cpp.llama_model_is_recurrent(model)) or bool(llama_cpp.llama_model_is_hybrid(model))
        if self.recurrent:
            # + 1: calibration times batches of k + 1 rows and drops all but one. llama.cpp keeps
            # the last n_rs_seq + 1 tokens of a batch in one ubatch (and asserts that they fit).
            cparams.n_rs_seq = max(0, min(ROLLBACK_TOKENS + 1, cparams.n_ubatch - 2))
        ctx = llama_cpp.llama_init_from_model(model, cparams)
        if not ctx:
            llama_cpp.llama_model_free(model)
            self._model = None
            rpc.release(self.options.workers)
            raise ModelLoadError(f"llama.cpp could not create a context for {self.path.name}: {load_failure_reason()}")
        self._ctx = ctx
        # 0 where the architecture cannot roll its recurrent state back (llama.cpp clamps it)
        self.n_rs_seq = int(llama_cpp.llama_n_rs_seq(ctx)) if self.recurrent else 0
        self._rollback_room = 0  # rows the last decode can still give back (recurrent caches)
        self.hidden_rows_on = False

    def set_threads(self, count: int, batch_count: int | None = None) -> None:
        """Compute one-token decodes with ``count`` CPU threads and larger ones with
        ``batch_count`` (default: the same) from the next decode on (no reload)."""
        llama_cpp.llama_set_n_threads(self._ctx, count, batch_count or count)

    def close(self) -> None:
        self.prompt_store = PromptStore(0)  # the saved states belong to this context
        projector = getattr(self, "projector", None)
        if projector is not None:
            projector.close()  # before the weights it was loaded on
            self.projector = None
        if self._batch is not None:
            llama_cpp.llama_batch_free(self._batch)
            self._batch = None
        if self._ctx is not None:
            llama_cpp.llama_free(self._ctx)
            self._ctx = None
        if self._model is not None:
            llama_cpp.llama_model_free(self._model)
            self._model = None
            rpc.release(self.options.workers)

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit llama_cpp may be half torn down
            pass

    # ----------------------------------------------------------------- properties
    @property
    def name(self) -> str:
        """The file's name without ``.gguf``: what users downloaded and recognise (a GGUF's
        ``general.name`` is often a training-run label such as "Smollm2 135M 8k Lc100K Mix1 Ep2")."""
        return self.path.stem

    @property
    def is_recurrent(self) -> bool:
        """A recurrent or hybrid cache (its state cannot simply be cut at a position)."""
        return self.recurrent

    @property
    def can_roll_back(self) -> bool:
        """Rejected draft tokens can be dropped from the cache (always for attention caches;
        for recurrent ones only where llama.cpp keeps state snapshots)."""
        return not self.recurrent or self.n_rs_seq > 0

    @property
    def max_draft(self) -> int:
        """The most tokens one cycle may draft here: a verify pass (the drafts and the last token)
        is one batch, and a recurrent cache rolls back only as far as its state snapshots."""
        batch = self.n_batch - 1
        return min(batch, max(self.n_rs_seq - 1, 0)) if self.recurrent else batch

    @property
    def handle(self) -> tuple[Any, Any]:
        """(llama_model *, llama_context *) for the engine's own extensions (MTP contexts)."""
        return self._model, self._ctx

    def is_eog(self, token: int) -> bool:
        return bool(self._eog[token])

    # ----------------------------------------------------------------- text
    def piece(self, token: int) -> bytes:
        """The bytes a token stands for (special tokens render as empty, but those of show_special)."""
        cached = self._pieces.get(token)
        if cached is None:
            special = token in self._shown_special
            n = llama_cpp.llama_token_to_piece(self.vocab, token, self._piece_buf, 256, 0, special)
            cached = self._piece_buf.raw[: max(n, 0)]
            self._pieces[token] = cached
        return cached

    def show_special(self, texts: Iterable[str]) -> None:
        """Render the special tokens these texts tokenize to as their text from now on: reasoning
        markers that are control tokens (gpt-oss's ``<|channel|>``, Gemma 4's ``<|channel>``),
        which the detokenizer otherwise drops, so answers carry them as the template wrote them."""
        for text in texts:
            for token in self.tokenize(text, add_special=False, parse_special=True):
                if self.token_text(token) and not self.piece(token):
                    self._shown_special.add(token)
                    self._pieces.pop(token, None)

    def detokenize(self, tokens: Sequence[int]) -> str:
        return b"".join(self.piece(t) for t in tokens).decode("utf-8", errors="replace")
