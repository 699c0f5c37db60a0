"""The target's own multi-token-prediction head drafts (qwen35 and other MTP architectures).

Its context keeps a KV cache of its own with one entry per target position p: (x_p, h_{p-1}).
Entries wait in a queue until the next draft, where they are decoded in one batch together
with the newest token (the "fused" catch-up: its output is already the first draft), so each
cycle costs k MTP decodes. The head's own hidden row feeds the next draft step (chained), and
those draft-time entries are dropped again, as llama.cpp's ``draft-mtp`` does.
"""

from __future__ import annotations

import time

import numpy as np

from desktop_app.engine.api import DrafterKind, SamplingParams
from desktop_app.engine.drafters import Draft, Hidden
from desktop_app.engine.drafters.hidden_state import HiddenStateDrafter
from desktop_app.engine.llama.model import common_prefix
from desktop_app.engine.sampling_noise import SamplingNoise


class MtpDrafter(HiddenStateDrafter):
    kind = DrafterKind.MTP

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.kv: list[int] = []  # tokens whose entries the MTP cache holds (positions 0..)
        self.queue: list[tuple[int, np.ndarray]] = []  # entries to decode at len(kv)...

    def _valid_entries(self, context: list[int]) -> int:
        return min(common_prefix(self.kv, context), len(context) - 1)

    def hidden_from(self, context: list[int]) -> int | None:
        m = self._valid_entries(context)
        if m == 0 or self._tail_covers(context) == m:
            return m  # entry m pairs with h_{m-1}: zeros, or the row kept from the last answer
        return m - 1

    def prepare(self, context: list[int], hidden: Hidden | None) -> None:
        m = self._valid_entries(context)
        self.ctx.truncate(m)
        del self.kv[m:]
        self.queue = [(context[p], self._h_of(p - 1, hidden, context)) for p in range(m, len(context))]
        self.pending = self.queue[-1][1]
        self.pending_pos = len(context) - 2

    def accepted(self, tokens: list[int], hidden: np.ndarray | None) -> None:
        assert hidden is not None
        self.queue.extend((t, hidden[j].copy()) for j, t in enumerate(tokens))
        super().accepted(tokens, hidden)

    def draft(self, context: list[int], k: int, params: SamplingParams, noise: SamplingNoise, p_min: float) -> Draft:
        start = time.perf_counter()
        out = Draft()
        tokens = [t for t, _ in self.queue]
        row = self.ctx.decode(tokens, len(self.kv), np.stack([h for _, h in self.queue]), output_last=True)
        self.kv.extend(tokens)
        self.queue = []
        for i in range(k):
            if not self._pick(self.ctx.logits(row), params, noise, out, p_min, context):
                break
            if i + 1 < k:  # chain: the head's own hidden row goes with its draft
                h = self.ctx.hidden(row)
                row = self.ctx.decode([out.tokens[-1]], len(self.kv) + i, h[None, :], output_last=True)
        self.ctx.truncate(len(self.kv))  # draft-time entries used the head's h, not the target's
        out.seconds = time.perf_counter() - start
        return out

    def _probe_position(self) -> int:
        return len(self.kv)  # the MTP cache's own end: no position gap, truncated right after

    def settle(self, cached: list[int]) -> None:
        """Decode the queued entries the target's cache holds, so both caches end together."""
        n = len(cached)
        todo = [(t, h) for i, (t, h) in enumerate(self.queue) if len(self.kv) + i < n]
        if todo and [t for t, _ in todo] == cached[len(self.kv) : len(self.kv) + len(todo)]:
            self.ctx.decode([t for t, _ in todo], len(self.kv), np.stack([h for _, h in todo]), output_last=False)
            self.kv.extend(t for t, _ in todo)
        self.queue = []
        super().settle(cached)
