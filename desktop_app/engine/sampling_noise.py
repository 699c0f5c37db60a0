"""The only randomness in sampling: Gumbel noise that is a pure function of (seed, position, token).

The token at answer position t is the Gumbel-max sample argmax_i (log p_i + g_i(seed, t)) over
the tokens with p_i > 0, which is an exact draw from p (Gumbel 1954; the "Gumbel-max trick").
A drafter that samples from its own q uses the same g at the same position, and its token is
kept exactly when it equals the target's: the target's token at each position is then the same
with or without drafts, so a seed gives one text in every speculation mode and the text is
distributed as the target's (docs/drafting.md, "Sampling: one seed, one text").

g is a pure function of (seed, position, token id), not the next numbers of one stream, so that
nothing depends on how many numbers were consumed before: NumPy's ``SeedSequence`` hashes
(seed, position) into the state of an SFC64 generator (NumPy keeps seed sequences' and bit
generators' streams the same across versions), and token j's number is that stream's j-th
draw. One position's numbers cost one fill of the vocabulary in C (a fraction of a
millisecond on a 49k vocabulary).

Position t is the index of the token in the answer (0: the first token generated for this
request, reasoning tokens included), whatever the prompt holds.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import numpy as np

from desktop_app.engine.api import SEED


def fresh_seed() -> int:
    """A random seed for a request that gives none (drawn once per answer)."""
    return secrets.randbelow(SEED.high + 1)


@dataclass(frozen=True)
class SamplingNoise:
    """The noise of one answer from position ``start`` on: ``gumbel(i, tokens)`` is the noise at
    answer position ``start + i``. The loop hands each cycle the noise ``after`` the tokens
    committed so far, so a drafter's i-th draft and the target's verify row i read the same."""

    seed: int
    start: int = 0

    def after(self, n: int) -> SamplingNoise:
        return SamplingNoise(self.seed, self.start + n)

    def draws(self, i: int, n: int) -> np.ndarray:
        """The numbers of tokens 0..n-1 at position ``start + i``, uniform in [0, 1): independent
        across tokens, positions and seeds, and the same on every call (token j's is the j-th
        draw of the position's stream, however many are drawn)."""
        entropy = np.random.SeedSequence([self.seed, self.start + i])
        return np.random.Generator(np.random.SFC64(entropy)).random(n)

    def gumbel(self, i: int, tokens: np.ndarray) -> np.ndarray:
        """The Gumbel noise g = -log(-log(1 - r)) of ``tokens`` at position ``start + i``."""
        r = self.draws(i, int(tokens.max()) + 1 if tokens.size else 0)[tokens]
        return -np.log(-np.log1p(-r))

    def pick(self, probs: np.ndarray, i: int) -> int:
        """The Gumbel-max sample of ``probs`` at position ``start + i``: argmax of log p + g over
        the tokens with p > 0.

        Computed as the equivalent exponential race, argmin of E/p with E = -log(1 - r) = exp(-g),
        and only over the tokens that can beat the likeliest one, j: a token t wins over it only
        when E_t < p_t * E_j / p_j, which needs r_t < p_t * E_j / p_j (as r <= -log(1 - r)).
        That test costs no logarithm and few arrays, so a whole vocabulary stays cheap."""
        r = self.draws(i, probs.shape[0])
        lead = int(np.argmax(probs))
        bound = float(-np.log1p(-r[lead]) / probs[lead]) * (1.0 + 1e-9)  # the margin: rounding
        near = r <= probs * bound  # a superset of the tokens that can win
        near[lead] = True
        (candidates,) = np.nonzero(near)
        candidates = candidates[probs[candidates] > 0.0]
        race = -np.log1p(-r[candidates]) / probs[candidates]
        return int(candidates[int(np.argmin(race))])
