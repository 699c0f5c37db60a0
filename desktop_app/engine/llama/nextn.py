"""Contexts that draft from a target's hidden states: its own MTP layers, or a Gemma 4 assistant.

llama.cpp runs both as a context of type ``LLAMA_CONTEXT_TYPE_MTP`` created against the
target's context (``ctx_other``), fed one (token, hidden row) pair per batch entry
(``common/speculative.cpp``, ``common_speculative_impl_draft_mtp``):

- an **MTP head** (qwen35 and others) lives in the target's own GGUF (loaded with ``load_mtp``);
  its context keeps a small KV cache of its own, one entry per target position p holding
  (x_p, h_{p-1});
- a **Gemma 4 assistant** is a separate GGUF whose layers read the target's KV cache
  (``llama_get_ctx_other`` returns the target: shared memory); it has no cache of its own and
  every draft step of a cycle sits at the same position.

Both output one hidden row per batch token (unmasked: qwen35's MTP graph stores its rows before
dropping non-output rows, so masked rows are only right for one-row decodes).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np

from desktop_app.engine.api import ModelOptions
from desktop_app.engine.errors import DecodeError, IncompatibleDraftError, ModelLoadError
from desktop_app.engine.llama import llama_ext
from desktop_app.engine.llama.backend import ensure_backend, load_failure_reason
from desktop_app.engine.llama.drafting import assistant_mismatch
from desktop_app.engine.llama.gguf_file import GGUFInfo, read_gguf
from desktop_app.engine.llama.model import LlamaModel, ProgressFn, context_params, load_weights
from desktop_app.engine.llama.vocab import VocabProperties

NEXTN_BATCH = 256  # catch-up decodes of a long prompt go in chunks; a smaller compute buffer


class NextnContext:
    """One MTP-type context over ``model`` (a llama_model pointer) against ``target``'s context."""

    def __init__(self, model: Any, target: LlamaModel) -> None:
        llama_ext.check()
        self.target = target
        self._model = model
        cparams = context_params(model, target.options)
        cparams.n_ctx = target.n_ctx
        cparams.n_batch = cparams.n_ubatch = min(NEXTN_BATCH, target.n_ctx)
        cparams.n_rs_seq = 0
        cparams.ctx_type = llama_cpp.LLAMA_CONTEXT_TYPE_MTP
        _, target_ctx = target.handle
        cparams.ctx_other = target_ctx
        ctx = llama_cpp.llama_init_from_model(model, cparams)
        if not ctx:
            raise ModelLoadError(
                f"llama.cpp could not create a drafting context for {target.name}: {load_failure_reason()}"
            )
        self._ctx = ctx
        self.shared_memory = llama_ext.get_ctx_other(ctx) == (
            target_ctx.value if hasattr(target_ctx, "value") else target_ctx
        )
        llama_ext.set_embeddings_nextn(ctx, True, False)
        self.n_batch = int(llama_cpp.llama_n_batch(ctx))
        self.n_vocab = target.n_vocab
        self.n_embd = int(llama_cpp.llama_model_n_embd_out(model))
        self._batch = llama_cpp.llama_batch_init(self.n_batch, 0, 1)
        self._memory = llama_cpp.llama_get_memory(ctx)

    def set_threads(self, count: int, batch_count: int | None = None) -> None:
        llama_cpp.llama_set_n_threads(self._ctx, count, batch_count or count)

    def decode(
        self, tokens: Sequence[int], start: int, hidden: np.ndarray, output_last: bool, same_position: bool = False
    ) -> int:
        """Decode (token, hidden row) pairs at ``start``, ``start + 1``... (or all at ``start``);
        returns the batch row of the last token (where its logits and hidden row are read)."""
        rows = np.ascontiguousarray(hidden, dtype=np.float32)
        assert rows.shape == (len(tokens), self.n_embd), rows.shape
        begin = 0
        for begin in range(0, len(tokens), self.n_batch):
            chunk = tokens[begin : begin + self.n_batch]
            last_chunk = begin + self.n_batch >= len(tokens)
            batch = self._batch
            batch.n_tokens = len(chunk)
            for i, token in enumerate(chunk):
                batch.token[i] = token
                batch.pos[i] = start if same_position else start + begin + i
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = 0
                batch.logits[i] = output_last and last_chunk and i == len(chunk) - 1
            block = rows[begin : begin + len(chunk)]
            batch.embd = block.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
            try:
                rc = llama_cpp.llama_decode(self._ctx, batch)
            finally:
                batch.embd = None  # llama_batch_free must never free our numpy buffer
            if rc != 0:
                raise DecodeError(f"llama_decode failed ({rc}) while drafting")
        return len(tokens) - 1 - begin

    def logits(self, row: int) -> np.ndarray:
        ptr = llama_cpp.llama_get_logits_ith(self._ctx, row)
        if not ptr:
            raise DecodeError(f"no drafting logits for row {row}")
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))

    def hidden(self, row: int) -> np.ndarray:
        return llama_ext.embeddings_nextn_ith(self._ctx, row, self.n_embd)

    def truncate(self, n_keep: int) -> None:
        """Drop this context's own cache entries from position ``n_keep`` on (MTP heads)."""
        if not self.shared_memory:  # an assistant's memory IS the target's: never touch it here
            llama_cpp.llama_memory_seq_rm(self._memory, 0, n_keep, -1)

    def close(self) -> None:
        """Free before the target's context (this one refers to it)."""
        if self._batch is not None:
            llama_cpp.llama_batch_free(self._batch)
            self._batch = None
        if self._ctx is not None:
            llama_cpp.llama_free(self._ctx)
            self._ctx = None


class AssistantWeights(VocabProperties):
    """A Gemma 4 assistant GGUF: weights and vocabulary only (its context needs a target's)."""

    def __init__(
        self, path: str | Path, options: ModelOptions | None = None, progress: ProgressFn | None = None
    ) -> None:
        ensure_backend()
        self.path = Path(path)
        self.options = options or ModelOptions()
        self.info: GGUFInfo = read_gguf(self.path)
        self._model = load_weights(self.path, self.options, progress)
        self.vocab = llama_cpp.llama_model_get_vocab(self._model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self.vocab))
        self.n_ctx = 0  # it uses its target's context

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def pointer(self) -> Any:
        return self._model

    def close(self) -> None:
        if self._model is not None:
            llama_cpp.llama_model_free(self._model)
            self._model = None


def require_assistant_fits(target: GGUFInfo, assistant: GGUFInfo) -> None:
    reasons = assistant_mismatch(target, assistant)
    if reasons:
        raise IncompatibleDraftError(reasons)
