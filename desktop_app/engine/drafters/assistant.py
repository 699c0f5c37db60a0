"""A Gemma 4 assistant drafts: a small GGUF whose layers read the target's own KV cache.

It keeps no cache: each draft step decodes (token, hidden row) at the position of the newest
token, the first with the target's hidden row h_{n-1}, the next ones with the assistant's own
output row ("with shared memory we use the same position for all draft tokens",
llama.cpp's ``common/speculative.cpp``). Rejected drafts only need trimming from the target.
"""

from __future__ import annotations

import time

from desktop_app.engine.api import DrafterKind, SamplingParams
from desktop_app.engine.drafters import Draft, Hidden
from desktop_app.engine.drafters.hidden_state import HiddenStateDrafter
from desktop_app.engine.sampling_noise import SamplingNoise


class AssistantDrafter(HiddenStateDrafter):
    kind = DrafterKind.ASSISTANT

    def hidden_from(self, context: list[int]) -> int | None:
        last = len(context) - 1  # the newest token pairs with h at the position before it
        return last if self._tail_covers(context) == last else max(last - 1, 0)

    def prepare(self, context: list[int], hidden: Hidden | None) -> None:
        self.pending = self._h_of(len(context) - 2, hidden, context)
        self.pending_pos = len(context) - 2

    def draft(self, context: list[int], k: int, params: SamplingParams, noise: SamplingNoise, p_min: float) -> Draft:
        start = time.perf_counter()
        out = Draft()
        position = len(self.target.kv_tokens)  # where the newest token goes
        token, h = context[-1], self.pending
        for _ in range(k):
            row = self.ctx.decode([token], position, h[None, :], output_last=True, same_position=True)
            if not self._pick(self.ctx.logits(row), params, noise, out, p_min, context):
                break
            token, h = out.tokens[-1], self.ctx.hidden(row)
        out.seconds = time.perf_counter() - start
        return out
