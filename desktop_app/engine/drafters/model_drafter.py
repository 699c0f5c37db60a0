"""A small GGUF model sharing the target's vocabulary drafts greedily (or by sampling with the answer's noise)."""

from __future__ import annotations

import time

import numpy as np

from desktop_app.engine.api import DrafterKind, SamplingParams
from desktop_app.engine.drafters import CostProbe, Draft, Drafter, Hidden
from desktop_app.engine.llama.model import LlamaModel
from desktop_app.engine.llama.timing import time_decodes
from desktop_app.engine.sampling import penalize, probabilities
from desktop_app.engine.sampling_noise import SamplingNoise


def top_probability(logits: np.ndarray) -> float:
    shifted = logits - logits.max()
    return float(1.0 / np.exp(shifted).sum())


class ModelDrafter(Drafter):
    kind = DrafterKind.MODEL
    free = False

    def __init__(self, model: LlamaModel) -> None:
        self.model = model

    def prepare(self, context: list[int], hidden: Hidden | None) -> None:
        self.model.prefill(context)

    def draft(self, context: list[int], k: int, params: SamplingParams, noise: SamplingNoise, p_min: float) -> Draft:
        start = time.perf_counter()
        out = Draft()
        # Bring the cache in line with the context (decodes only what the last cycle added).
        self.model.prefill(context)
        recent = list(context[-params.repeat_last_n :]) if params.penalized else []
        for i in range(k):
            logits = penalize(self.model.logits(-1), params, recent)  # as the target's row i will be
            if params.greedy:
                token = int(np.argmax(logits))
                if p_min > 0.0 and i > 0 and top_probability(logits) < p_min:
                    break
            else:
                q = probabilities(logits, params)  # already penalised
                if p_min > 0.0 and i > 0 and float(q.max()) < p_min:
                    break
                token = noise.pick(q, i)  # the noise the target's row i will use
            out.tokens.append(token)
            if params.penalized:
                recent.append(token)
            if i + 1 < k:  # the last draft's logits are never needed
                self.model.decode_one(token)
        out.seconds = time.perf_counter() - start
        return out

    def token_cost_s(self, probe: CostProbe) -> float:
        # timed alternating with 2-token decodes, like the catch-up decode that opens a cycle
        return time_decodes(self.model, [1, 2], probe.token, probe.depth, probe.reps, probe.should_stop)[0]
