"""The only randomness in sampling: Gumbel noise that is a pure function of (seed, position, token).

The token at answer position t is the Gumbel-max sample argmax_i (log p_i + g_i(seed, t)) over
the tokens with p_i > 0, which is an exact draw from p (Gumbel 1954; the "Gumbel-max trick").
A drafter that samples from its own q uses the same g at the same position, and its token is
kept exactly when it equals the target's: the target's token at each position is then the same
with or without drafts, so a seed gives one text in every speculation mode and the text is
distributed as the target's (docs/drafting.md, "Sampling: one seed, one text").

g is made from a counter-based hash rather than a stream of random numbers, so that nothing
depends on how many numbers were consumed before: splitmix64 (Steele, Lea and Flood 2014, the
seeder of Java's SplittableRandom and of xoshiro) keys a stream by (seed, position), and the
token id indexes it. Only the tokens in a distribution's support are hashed.

Position t is the index of the token in the answer (0: the first token generated for this
request, reasoning tokens included), whatever the prompt holds.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import numpy as np

from desktop_app.engine.api import SEED

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15  # splitmix64's increment: 2^64 / the golden ratio, odd
_M1, _M2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB  # splitmix64's finaliser multipliers
_U_GOLDEN, _U_M1, _U_M2 = np.uint64(_GOLDEN), np.uint64(_M1), np.uint64(_M2)
_U1, _U11, _U27, _U30, _U31 = (np.uint64(n) for n in (1, 11, 27, 30, 31))


def _mix(x: int) -> int:
    """splitmix64's finaliser on one 64-bit integer."""
    x = ((x ^ (x >> 30)) * _M1) & _MASK
    x = ((x ^ (x >> 27)) * _M2) & _MASK
    return x ^ (x >> 31)


def _mix_all(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on a uint64 array, in place (array arithmetic wraps modulo 2^64;
    fresh arrays cost more than the arithmetic on a whole vocabulary, so there is one scratch)."""
    scratch = x >> _U30
    x ^= scratch
    x *= _U_M1
    np.right_shift(x, _U27, out=scratch)
    x ^= scratch
    x *= _U_M2
    np.right_shift(x, _U31, out=scratch)
    x ^= scratch
    return x


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

    def uniform(self, i: int, tokens: np.ndarray) -> np.ndarray:
        """One uniform number in (0, 1) per token id of ``tokens`` at position ``start + i``:
        independent across tokens, positions and seeds, and the same on every call."""
        position = self.start + i
        key = _mix((_mix((self.seed + _GOLDEN) & _MASK) + (position + 1) * _GOLDEN) & _MASK)
        x = tokens.astype(np.uint64)  # the stream's counter: token id + 1
        x += _U1
        x *= _U_GOLDEN
        x += np.uint64(key)
        x = _mix_all(x)
        x >>= _U11  # 53 random bits
        uniform = x.view(np.int64).astype(np.float64)
        uniform += 0.5
        uniform *= 2.0**-53
        return uniform

    def gumbel(self, i: int, tokens: np.ndarray) -> np.ndarray:
        """The Gumbel noise g = -log(-log u) of ``tokens`` at position ``start + i``."""
        return -np.log(-np.log(self.uniform(i, tokens)))

    def pick(self, probs: np.ndarray, i: int) -> int:
        """The Gumbel-max sample of ``probs`` at position ``start + i``: argmax of log p + g over
        the tokens with p > 0.

        Computed as the equivalent exponential race, argmin of E/p with E = -log u = exp(-g),
        and only over the tokens that can beat the likeliest one: a token t wins over it only when
        E_t < p_t * E_j / p_j, which needs 1 - u_t < p_t * E_j / p_j (as 1 - u <= -log u). That
        test costs no logarithm, so a whole vocabulary's support stays cheap."""
        support = np.flatnonzero(probs)
        p = probs[support]
        u = self.uniform(i, support)
        lead = int(np.argmax(p))
        bound = -np.log(u[lead]) / p[lead]
        near = 1.0 - u <= p * bound * (1.0 + 1e-9)  # a superset of the tokens that can win
        near[lead] = True
        (candidates,) = np.nonzero(near)
        race = -np.log(u[candidates]) / p[candidates]
        return int(support[candidates[int(np.argmin(race))]])
