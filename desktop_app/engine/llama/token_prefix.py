"""The shared prefix of two token lists: how much of a cache a new prompt can keep."""

from __future__ import annotations

from collections.abc import Sequence


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the shared prefix. Called every cycle with the whole context, so the usual
    case (one is a prefix of the other) is a single C-level slice comparison."""
    n = min(len(a), len(b))
    if list(a[:n]) == list(b[:n]):
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo] and a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if list(a[:mid]) == list(b[:mid]):
            lo = mid
        else:
            hi = mid
    return lo
