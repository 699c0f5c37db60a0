"""Sentence embeddings from a loaded model, for ``/v1/embeddings``.

A second llama.cpp context on the same weights (no second copy of the model) with embeddings on:
a text's vector is the pooled hidden state of its tokens, L2-normalised as OpenAI's are. The
pooling is the model's own when its GGUF declares one (an embedding model: CLS, last token...),
otherwise the mean over the tokens, which is what llama.cpp's server uses for a generative model
asked for embeddings. Texts longer than the context are refused, never cut silently, and so is
a request whose texts together take more than ``max_tokens`` (:data:`MAX_REQUEST_TOKENS` unless
the caller says otherwise): counted before any is computed, while tokenizing, so a request far
over it costs no more than the tokens up to the limit. A ``cancel`` event set meanwhile stops the
work before the next text (a client that went away). The texts are computed one at a time
(:meth:`Embedder.vector`), so a caller can let other work run between two of them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import llama_cpp
import numpy as np

from desktop_app.engine.api import Embeddings
from desktop_app.engine.errors import (
    ContextOverflowError,
    EmbeddingCancelled,
    EmbeddingLimitError,
    EmptyPromptError,
    EngineError,
)
from desktop_app.engine.llama.model import LlamaModel

EMBEDDING_CTX = 2048  # tokens per text at most (a context this size costs a few MB of KV cache)
# Tokens of one request, its texts together: 8 full texts, a few seconds of a small model on a
# laptop's cores (about 0.2 ms a token for a 135M model on one core; a 7B model, 20 times that).
MAX_REQUEST_TOKENS = 16_384


class Embedder:
    """The embedding context of one loaded model; one thread at a time (the engine's lock)."""

    def __init__(self, model: LlamaModel) -> None:
        self.model = model
        weights, _ctx = model.handle
        cparams = llama_cpp.llama_context_default_params()
        train = int(llama_cpp.llama_model_n_ctx_train(weights))
        self.n_ctx = min(EMBEDDING_CTX, train) if train > 0 else EMBEDDING_CTX
        cparams.n_ctx = self.n_ctx
        cparams.n_batch = cparams.n_ubatch = self.n_ctx  # a text is one batch: pooling sees all of it
        cparams.embeddings = True
        cparams.n_threads = cparams.n_threads_batch = model.options.n_threads or cparams.n_threads
        self._ctx = llama_cpp.llama_init_from_model(weights, cparams)
        if not self._ctx:
            raise EngineError(f"llama.cpp could not make an embedding context for {model.name}")
        if llama_cpp.llama_pooling_type(self._ctx) == llama_cpp.LLAMA_POOLING_TYPE_NONE:
            llama_cpp.llama_free(self._ctx)
            cparams.pooling_type = llama_cpp.LLAMA_POOLING_TYPE_MEAN
            self._ctx = llama_cpp.llama_init_from_model(weights, cparams)
            if not self._ctx:
                raise EngineError(f"llama.cpp could not make an embedding context for {model.name}")
        self.width = int(llama_cpp.llama_model_n_embd(weights))
        self._batch = llama_cpp.llama_batch_init(self.n_ctx, 0, 1)

    def embed(
        self, texts: Sequence[str], cancel: threading.Event | None = None, max_tokens: int = MAX_REQUEST_TOKENS
    ) -> Embeddings:
        """A unit vector per text; ContextOverflowError naming a text that does not fit,
        EmbeddingLimitError when the texts take more than ``max_tokens`` together, and
        EmbeddingCancelled when ``cancel`` is set before the last one is done."""
        token_lists = self.tokenized(texts, cancel, max_tokens)
        vectors = []
        for tokens in token_lists:
            _stop_if(cancel)
            vectors.append(self.vector(tokens))
        return Embeddings(vectors, sum(len(tokens) for tokens in token_lists))

    def tokenized(
        self, texts: Sequence[str], cancel: threading.Event | None = None, max_tokens: int = MAX_REQUEST_TOKENS
    ) -> list[list[int]]:
        """The texts' tokens, each checked (see :meth:`embed`) before any vector is computed."""
        token_lists: list[list[int]] = []
        total = 0
        for i, text in enumerate(texts):
            _stop_if(cancel)
            tokens = self.model.tokenize(text, add_special=True, parse_special=False)
            if len(tokens) > self.n_ctx:
                raise ContextOverflowError(
                    f"input {i} is {len(tokens):,} tokens; an embedding takes at most {self.n_ctx:,}"
                )
            if not tokens:
                raise EmptyPromptError(f"input {i} is empty")
            total += len(tokens)
            if total > max_tokens:
                raise EmbeddingLimitError(
                    f"the inputs take more than {max_tokens:,} tokens (input {i} is past it); one embeddings "
                    f"request takes at most {max_tokens:,}: send them in several requests"
                )
            token_lists.append(tokens)
        return token_lists

    def vector(self, tokens: list[int]) -> list[float]:
        """The unit vector of one text's tokens (from :meth:`tokenized`)."""
        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(self._ctx), True)
        batch = self._batch
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = True
        batch.n_tokens = len(tokens)
        if llama_cpp.llama_decode(self._ctx, batch) != 0:
            raise EngineError("llama.cpp could not compute the embedding")
        pointer = llama_cpp.llama_get_embeddings_seq(self._ctx, 0)
        if not pointer:
            raise EngineError("llama.cpp gave no pooled embedding for this model")
        vector = np.ctypeslib.as_array(pointer, shape=(self.width,)).astype(np.float64)
        norm = float(np.linalg.norm(vector))
        return (vector / norm if norm > 0 else vector).tolist()

    def close(self) -> None:
        if self._batch is not None:
            llama_cpp.llama_batch_free(self._batch)
            self._batch = None
        if self._ctx:
            llama_cpp.llama_free(self._ctx)
            self._ctx = None


def embed_in_turns(
    lock: threading.Lock,
    embedder: Callable[[], Embedder],
    texts: Sequence[str],
    cancel: threading.Event | None = None,
    between: Callable[[], None] | None = None,
) -> Embeddings:
    """:meth:`Embedder.embed` one text at a time under ``lock`` (the engine's), ``between`` called
    between two texts with the lock free; ``embedder`` gives the loaded model's (EngineError when
    another model was loaded meanwhile)."""
    with lock:
        first = embedder()
        token_lists = first.tokenized(texts, cancel)
    vectors: list[list[float]] = []
    for tokens in token_lists:
        if between is not None and vectors:
            between()
        with lock:
            _stop_if(cancel)
            if embedder() is not first:
                raise EngineError("the model changed while the embeddings were computed; send the request again")
            vectors.append(first.vector(tokens))
    return Embeddings(vectors, sum(len(tokens) for tokens in token_lists))


def _stop_if(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise EmbeddingCancelled("the embeddings request was cancelled")
