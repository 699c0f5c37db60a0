"""What the MTP head and the Gemma 4 assistant share: they draft from the target's hidden rows.

The target outputs one hidden row per decoded token (``LlamaModel.enable_hidden_rows``). A
drafter here keeps ``pending``: the target's hidden row h_{n-1} at the last cached position
n-1, which pairs with the next token to decode (the newest committed one). Between answers it
keeps that row with the cache it belongs to (``tail``), so a next turn that extends the same
conversation needs no target token re-decoded.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from desktop_app.engine.api import SamplingParams
from desktop_app.engine.drafters import CostProbe, Draft, Drafter, Hidden
from desktop_app.engine.drafters.model_drafter import top_probability
from desktop_app.engine.llama.model import LlamaModel, common_prefix
from desktop_app.engine.llama.nextn import NextnContext
from desktop_app.engine.sampling import adjusts, penalize, probabilities
from desktop_app.engine.sampling_noise import SamplingNoise


class HiddenStateDrafter(Drafter):
    needs_hidden = True

    def __init__(self, target: LlamaModel, ctx: NextnContext) -> None:
        self.target = target
        self.ctx = ctx
        self.zeros = np.zeros(ctx.n_embd, np.float32)  # h_{-1}: before the first token
        self.pending = self.zeros
        self.pending_pos = -1
        self.tail: tuple[list[int], np.ndarray] | None = None  # (target cache, h at its last position)

    # ------------------------------------------------------------------ hidden rows
    def _tail_covers(self, context: list[int]) -> int:
        """How many leading tokens of ``context`` the stored tail row belongs to (0: none)."""
        if self.tail is None:
            return 0
        cached, _ = self.tail
        n = len(cached)
        return n if 0 < n < len(context) and common_prefix(cached, context) == n else 0

    def _h_of(self, position: int, hidden: Hidden | None, context: list[int]) -> np.ndarray:
        """The target's hidden row at ``position`` of ``context`` (-1: zeros)."""
        if position < 0:
            return self.zeros
        if hidden is not None and hidden[0] <= position < hidden[0] + len(hidden[1]):
            return hidden[1][position - hidden[0]]
        if self.tail is not None and self._tail_covers(context) == position + 1:
            return self.tail[1]
        raise RuntimeError(f"no hidden row for position {position}")  # hidden_from() asked for it

    def _pick(
        self,
        logits: np.ndarray,
        params: SamplingParams,
        noise: SamplingNoise,
        out: Draft,
        p_min: float,
        context: Sequence[int] = (),
    ) -> bool:
        """Choose the next draft token from ``logits`` into ``out``; False when confidence is too low.
        The repeat penalty sees ``context`` and the drafts so far, as the target's row will."""
        if adjusts(params):
            logits = penalize(logits, params, [*context[-params.repeat_last_n :], *out.tokens])
        if params.greedy:
            if p_min > 0.0 and out.tokens and top_probability(logits) < p_min:
                return False
            out.tokens.append(int(np.argmax(logits)))
            return True
        q = probabilities(logits, params)
        if p_min > 0.0 and out.tokens and float(q.max()) < p_min:
            return False
        out.tokens.append(noise.pick(q, len(out.tokens)))  # the noise of the target's row there
        return True

    def accepted(self, tokens: list[int], hidden: np.ndarray | None) -> None:
        assert hidden is not None
        self.pending = hidden[len(tokens) - 1].copy()
        self.pending_pos = len(self.target.kv_tokens) - 1

    def settle(self, cached: list[int]) -> None:
        self.tail = (list(cached), self.pending) if cached and self.pending_pos == len(cached) - 1 else None

    def _probe_position(self) -> int:
        """Where a timed draft step decodes without disturbing anything (overridden by MTP)."""
        return len(self.target.kv_tokens)

    def token_cost_s(self, probe: CostProbe) -> float:
        start = self._probe_position()
        times = []
        for _ in range(probe.reps + 1):
            if probe.should_stop is not None and probe.should_stop():
                break
            t = time.perf_counter()
            self._time_step(probe.token, start)
            times.append(time.perf_counter() - t)
            self.ctx.truncate(start)
        return float(np.median(times[1:] or times or [1e-3]))

    def _time_step(self, token: int, position: int) -> None:
        self.ctx.decode([token], position, self.zeros[None, :], output_last=True, same_position=True)
