"""Sampling transforms: what turns a row of logits into the distribution a token is drawn from.

The draw itself is the Gumbel-max sample of that distribution with the answer's noise
(:mod:`desktop_app.engine.sampling_noise`): the target's row and a drafter's step at the same
position use the same noise, and a draft is kept exactly when it is the target's token there.
The target's p and a drafter's q go through the SAME transforms (:func:`penalize`: the logit bias
and the repeat penalty, then :func:`probabilities`), so they
agree as often as the models do. The repeat penalty depends on the tokens before the position
(``recent``): the target's row i and a drafter's i-th draft see the same committed context plus
the drafts before i, so both are penalised alike, greedy or sampled.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from desktop_app.engine.api import SamplingParams


def adjusts(params: SamplingParams) -> bool:
    """:func:`penalize` changes the model's scores (a logit bias, or the repeat penalty)."""
    return params.penalized or bool(params.logit_bias)


def penalize(logits: np.ndarray, params: SamplingParams, recent: Sequence[int]) -> np.ndarray:
    """``logits`` with the request's logit bias added (OpenAI's ``logit_bias``: llama.cpp's logit
    bias sampler, first in its chain), then llama.cpp's repeat penalty (its penalties sampler):
    each token found among the last ``repeat_last_n`` of ``recent`` (once, however often) has a
    positive score divided by ``repeat_penalty`` and a negative one multiplied by it. Applied
    before every other transform, to the target's rows and to every drafter's scores alike."""
    if params.logit_bias:
        ids, biases = zip(*params.logit_bias, strict=True)
        logits = logits.copy()
        logits[np.asarray(ids)] += np.asarray(biases, dtype=logits.dtype)
    if not params.penalized or not recent:
        return logits
    seen = np.unique(np.asarray(recent[-params.repeat_last_n :], dtype=np.int64))
    out = logits.copy()
    values = out[seen]
    out[seen] = np.where(values <= 0, values * params.repeat_penalty, values / params.repeat_penalty)
    return out


def probabilities(logits: np.ndarray, params: SamplingParams, recent: Sequence[int] | None = None) -> np.ndarray:
    """The distribution to sample from after temperature, top-k, top-p and min-p (float64).
    ``recent`` given: ``logits`` are the model's own, adjusted here first by :func:`penalize`
    (given the ``recent`` tokens); None: they are adjusted already."""
    if recent is not None:
        logits = penalize(logits, params, recent)
    scaled = logits.astype(np.float64) / params.temperature
    n = scaled.shape[0]
    if 0 < params.top_k < n:
        keep = np.argpartition(scaled, n - params.top_k)[n - params.top_k :]
        masked = np.full(n, -np.inf)
        masked[keep] = scaled[keep]
        scaled = masked
    scaled -= scaled.max()
    probs = np.exp(scaled)
    probs /= probs.sum()
    if params.min_p > 0.0:
        probs[probs < params.min_p * probs.max()] = 0.0
        probs /= probs.sum()
    if params.top_p < 1.0:
        order = np.argsort(-probs, kind="stable")
        cumulative = np.cumsum(probs[order])
        # keep the smallest prefix whose mass reaches top_p (always at least one token)
        cut = int(np.searchsorted(cumulative, params.top_p)) + 1
        trimmed = np.zeros_like(probs)
        trimmed[order[:cut]] = probs[order[:cut]]
        probs = trimmed / trimmed.sum()
    return probs


def restricted(probs: np.ndarray, logits: np.ndarray, allowed: np.ndarray, params: SamplingParams) -> np.ndarray:
    """The distribution under a grammar that allows the tokens of the mask ``allowed``: ``probs``
    (the transforms' distribution over every token) restricted to them and renormalised; when
    the transforms left none of them any mass (top-k kept only refused tokens), the transforms
    applied to the allowed tokens' logits alone. Sampling ``probs`` and keeping the token when it
    is allowed, else drawing from this, draws exactly from this (llama.cpp's "check the sampled
    token, mask only when it is refused"); with Gumbel-max and the same noise, the winner over
    every token, when allowed, is also the winner over the allowed ones."""
    kept = np.where(allowed, probs, 0.0)
    total = kept.sum()
    if total > 0.0:
        return kept / total
    return probabilities(np.where(allowed, logits, -np.inf), params)
