"""Decoding into a model's context and keeping the record of what its KV cache holds.

:class:`KvCache` is :class:`~desktop_app.engine.llama.model.LlamaModel`'s decoding half: it
reuses a cached prefix (a new chat turn decodes only new tokens), keeps earlier prompts' states
in its :class:`~desktop_app.engine.llama.prompt_cache.PromptStore` and restores the one a new
prompt shares most with, trims rejected draft tokens (within what a recurrent cache can roll
back), and reads logits and hidden rows back.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import llama_cpp
import numpy as np

from desktop_app.engine.errors import ContextOverflowError, DecodeError
from desktop_app.engine.llama import llama_ext
from desktop_app.engine.llama.prompt_cache import PromptStore, read_state, write_state
from desktop_app.engine.llama.token_prefix import common_prefix

if TYPE_CHECKING:
    from desktop_app.engine.llama.vision import MediaSpans


class KvCache:
    """Mixin: expects the context, batch and memory handles and the sizes a LlamaModel sets."""

    _model: Any
    _ctx: Any
    _batch: Any
    _memory: Any
    n_ctx: int
    n_batch: int
    n_vocab: int
    n_rs_seq: int  # recurrent-state snapshots llama.cpp keeps (0: an attention cache, or none)
    recurrent: bool
    kv_tokens: list[int]  # the tokens the KV cache holds, in order
    prefill_hidden: tuple[int, np.ndarray] | None
    hidden_rows_on: bool
    n_embd_out: int
    _rollback_room: int  # rows the last decode can still give back (recurrent caches)
    prompt_store: PromptStore  # earlier prompts' states (budget 0: none kept)

    def enable_hidden_rows(self) -> None:
        """Make every decode also output each row's final hidden state (what MTP heads and
        Gemma 4 assistants draft from); read with :meth:`hidden_rows`."""
        if not self.hidden_rows_on:
            llama_ext.set_embeddings_nextn(self._ctx, True, False)
            self.hidden_rows_on = True
            self.n_embd_out = int(llama_cpp.llama_model_n_embd_out(self._model))

    def hidden_rows(self, n_rows: int) -> np.ndarray:
        """A copy of the last decode's first ``n_rows`` hidden rows (one per batch token)."""
        return llama_ext.embeddings_nextn(self._ctx, n_rows, self.n_embd_out)

    def _decode(self, tokens: Sequence[int], start: int, want_logits: str) -> None:
        """Decode ``tokens`` at positions ``start``...; want_logits: 'all', 'last' or 'none'."""
        n = len(tokens)
        batch = self._batch
        assert batch is not None, "the model was closed"
        batch.n_tokens = n
        last = n - 1
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = start + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = want_logits == "all" or (want_logits == "last" and i == last)
        rc = llama_cpp.llama_decode(self._ctx, batch)
        if rc != 0:
            reason = {1: "no free slot in the KV cache (context full)", 2: "aborted", -1: "invalid batch"}
            raise DecodeError(f"llama_decode failed ({rc}): {reason.get(rc, 'backend error')}")
        # llama.cpp snapshots the recurrent state at each of the last rows of a decode: that many
        # tokens (at most n_rs_seq) can be dropped again, once. Further, seq_rm would report
        # success and leave a stale state, so truncate() must not ask for more.
        self._rollback_room = min(self.n_rs_seq, n - 1)

    def ensure_fits(self, n_tokens: int) -> None:
        if n_tokens > self.n_ctx:
            raise ContextOverflowError(f"The conversation needs {n_tokens} tokens but the context holds {self.n_ctx}")

    def prefill(self, tokens: Sequence[int], need_logits: bool = True, hidden_from: int | None = None) -> int:
        """Make the KV cache hold exactly ``tokens``, reusing the cached prefix.

        With ``need_logits`` the last token is (re)decoded so :meth:`logits` (-1) is its
        prediction. With ``hidden_from`` (hidden rows enabled) every token from that position on
        is (re)decoded and :attr:`prefill_hidden` holds (first position, their hidden rows).
        Returns how many tokens were decoded now.
        """
        steps = self.prefill_steps(tokens, need_logits, hidden_from)
        kept = next(steps)
        for _ in steps:
            pass
        return len(tokens) - kept

    def prefill_steps(
        self,
        tokens: Sequence[int],
        need_logits: bool = True,
        hidden_from: int | None = None,
        media: MediaSpans | None = None,
    ) -> Iterator[int]:
        """:meth:`prefill` one batch (``n_batch`` tokens) at a time: yields how many of
        ``tokens`` the cache holds, first the reused prefix, then after each batch. A caller
        that stops iterating leaves the cache holding what it last reported. ``media``: where
        the images of ``tokens`` sit (their placeholders; no hidden rows then), each read whole."""
        self.ensure_fits(len(tokens))
        limit = len(tokens) - 1 if need_logits and tokens else len(tokens)  # the last token's logits are needed
        if hidden_from is not None:
            limit = min(limit, max(hidden_from, 0))
        keep = min(common_prefix(self.kv_tokens, tokens), limit)
        if self.prompt_store.enabled and max(limit, len(self.kv_tokens)) - keep >= self.n_batch:
            keep = self._swap_prompts(tokens, keep, limit)  # a batch to save or to spare: see there
        if media is not None:
            keep = media.boundary(keep)
        self.truncate(keep)
        keep = len(self.kv_tokens)  # a recurrent cache may have had to start again
        yield keep
        if media is not None:
            yield from self._prefill_media(tokens, keep, need_logits, media)
            return
        todo = list(tokens[keep:])
        pos = keep
        rows: list[np.ndarray] = []
        for begin in range(0, len(todo), self.n_batch):
            chunk = todo[begin : begin + self.n_batch]
            is_last = begin + self.n_batch >= len(todo)
            self._decode(chunk, pos, "last" if (is_last and need_logits) else "none")
            if hidden_from is not None:
                rows.append(self.hidden_rows(len(chunk)))
            pos += len(chunk)
            self.kv_tokens.extend(chunk)
            if hidden_from is not None and is_last:
                self.prefill_hidden = (keep, np.concatenate(rows))
            yield pos
        if hidden_from is not None and not todo:
            self.prefill_hidden = (keep, np.zeros((0, self.n_embd_out), np.float32))

    def _prefill_media(self, tokens: Sequence[int], keep: int, need_logits: bool, media: MediaSpans) -> Iterator[int]:
        """The rest of a prefill whose tokens hold images: text in batches, each slice of an image whole."""
        for begin, end, image in media.runs(keep, len(tokens)):
            if image is not None:  # a slice of an image's embeddings
                media.projector.decode(self._ctx, image, begin, self.n_batch)
                self.kv_tokens.extend(tokens[begin:end])
                self._rollback_room = 0
                yield end
                continue
            for at in range(begin, end, self.n_batch):
                chunk = list(tokens[at : min(at + self.n_batch, end)])
                is_last = at + len(chunk) == len(tokens)
                self._decode(chunk, at, "last" if (is_last and need_logits) else "none")
                self.kv_tokens.extend(chunk)
                yield at + len(chunk)

    def _swap_prompts(self, tokens: Sequence[int], keep: int, limit: int) -> int:
        """Before a prefill keeps ``keep`` tokens of the cache: save the cache's state when that
        drops at least a batch of it, and restore a saved state that spares at least a batch more
        of ``tokens`` than the live cache does. Returns the prefix to keep now.

        A batch (``n_batch`` tokens) is the threshold both ways because fewer tokens are re-read
        in one pass, while saving or restoring copies the whole state: it keeps the per-cycle
        trims (rejected drafts, a draft model catching up) from copying anything."""
        found = self.prompt_store.best(tokens, limit)
        restore = found is not None and found[1] - keep >= self.n_batch
        if len(self.kv_tokens) - keep >= self.n_batch and not self.prompt_store.covers(self.kv_tokens):
            try:
                data = read_state(self._ctx)
            except MemoryError:  # the budget is more than this machine can spare now: not saved
                data = None
            if data is not None:
                self.prompt_store.add(self.kv_tokens, data)
        if found is None or not restore:
            return keep
        entry, spared = found
        self._rollback_room = 0  # a restored recurrent state has no snapshots
        if not write_state(self._ctx, self._memory, entry.data):
            self.kv_tokens = []
            return 0
        self.prompt_store.used(entry)
        self.kv_tokens = list(entry.tokens)
        return spared

    def decode_all_rows(self, tokens: Sequence[int]) -> None:
        """Append ``tokens`` to the cache with logits for every row (the verify pass)."""
        if len(self.kv_tokens) + len(tokens) > self.n_ctx:
            raise ContextOverflowError(f"The context of {self.n_ctx} tokens is full")
        self._decode(tokens, len(self.kv_tokens), "all")
        self.kv_tokens.extend(tokens)

    def decode_one(self, token: int) -> None:
        """Append one token with logits (plain decoding, drafting)."""
        if len(self.kv_tokens) + 1 > self.n_ctx:
            raise ContextOverflowError(f"The context of {self.n_ctx} tokens is full")
        self._decode((token,), len(self.kv_tokens), "last")
        self.kv_tokens.append(token)

    def logits(self, row: int = -1) -> np.ndarray:
        """A view of one row's logits from the last decode (valid until the next decode)."""
        ptr = llama_cpp.llama_get_logits_ith(self._ctx, row)
        if not ptr:
            raise DecodeError(f"no logits for row {row}")
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))

    def truncate(self, n_keep: int) -> None:
        """Drop cached tokens from position ``n_keep`` on (a recurrent cache that cannot roll
        that far back starts again empty: the next prefill decodes everything)."""
        drop = len(self.kv_tokens) - n_keep
        if drop <= 0:
            return
        if self.recurrent and drop > self._rollback_room:
            self.clear()
            return
        self._rollback_room = 0  # the snapshots are used up
        if not llama_cpp.llama_memory_seq_rm(self._memory, 0, n_keep, -1):
            self.clear()
            return
        del self.kv_tokens[n_keep:]

    def clear(self) -> None:
        llama_cpp.llama_memory_clear(self._memory, True)
        self.kv_tokens = []
        self._rollback_room = 0
