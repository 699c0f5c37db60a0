"""N-gram -> next-token counts, the table behind the n-gram map and the n-gram cache drafters.

The idea of llama.cpp's ``common/ngram-cache.cpp`` and ``ngram-map.cpp``: for each n-gram seen,
count the tokens that followed it; to draft, take the longest n-gram ending the context that
was seen, and propose its most frequent follower when it was seen often enough and wins a clear
share; append it and repeat. Keys are tuples of token ids; only whole tokens are stored (no
text), so the table is tied to one vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Confidence:
    """When a follower may be drafted: seen at least ``min_count`` times after its n-gram, and
    at least ``min_share`` of everything that followed it."""

    min_count: int = 1
    min_share: float = 0.5


class NgramCounts:
    """Counts of followers for every n-gram of the ``orders`` given (e.g. 2, 3, 4)."""

    def __init__(self, orders: Sequence[int] = (2, 3, 4)) -> None:
        self.orders = tuple(sorted(set(orders), reverse=True))  # longest first
        if not self.orders or self.orders[-1] < 1:
            raise ValueError("n-gram orders must be 1 or more")
        self.table: dict[tuple[int, ...], dict[int, int]] = {}
        self.tokens_added = 0

    def __len__(self) -> int:
        return len(self.table)

    def add(self, tokens: Sequence[int], start: int = 0, weight: int = 1) -> None:
        """Count the followers of every n-gram in ``tokens`` whose follower is at ``start`` or
        later (so a growing sequence is counted once: call again with the old length)."""
        table = self.table
        seq = tokens  # indexed in place: the context grows by a token a cycle, copying it would cost O(length)
        for i in range(max(start, 1), len(seq)):
            follower = seq[i]
            for n in self.orders:
                if i - n < 0:
                    continue
                key = tuple(seq[i - n : i])
                counts = table.get(key)
                if counts is None:
                    table[key] = {follower: weight}
                else:
                    counts[follower] = counts.get(follower, 0) + weight
        self.tokens_added += max(0, len(seq) - max(start, 1))

    def best(self, context: Sequence[int], rule: Confidence) -> int | None:
        """The follower to draft after ``context`` (its longest known n-gram), or None."""
        for n in self.orders:
            if len(context) < n:
                continue
            counts = self.table.get(tuple(context[-n:]))
            if not counts:
                continue
            if len(counts) == 1:  # most n-grams had one follower: no vote to count (drafting asks every cycle)
                [(token, count)] = counts.items()
                return token if count >= rule.min_count else None
            token = max(counts, key=counts.__getitem__)
            count = counts[token]
            if count >= rule.min_count and count >= rule.min_share * sum(counts.values()):
                return token
            return None  # the longest n-gram seen is unsure: a shorter one knows less
        return None

    def chain(self, context: Sequence[int], k: int, rule: Confidence) -> list[int]:
        """Up to ``k`` tokens, each the confident follower of the context plus those before it."""
        return chain(lambda window: self.best(window, rule), context, k, self.orders[0])

    def copy(self) -> NgramCounts:
        twin = NgramCounts(self.orders)
        twin.table = {key: dict(counts) for key, counts in self.table.items()}
        twin.tokens_added = self.tokens_added
        return twin

    def prune(self, max_entries: int) -> None:
        """Keep the ``max_entries`` n-grams seen most often (a bound on memory and file size)."""
        if len(self.table) <= max_entries:
            return
        ranked = sorted(self.table.items(), key=lambda item: sum(item[1].values()), reverse=True)
        self.table = dict(ranked[:max_entries])


class ContextFollower:
    """How much of a growing context a drafter has already indexed. The loop's context only
    grows within an answer, so the same list seen again needs only its new tokens; another list
    (the next answer) is compared with the record once: a continuation of the same conversation
    keeps the index, anything else starts it over."""

    def __init__(self) -> None:
        self.tokens: list[int] = []  # what was indexed, in order
        self._source: Sequence[int] | None = None

    def new_from(self, context: Sequence[int]) -> int:
        """The index of the first token not indexed yet (0: start over); records ``context``."""
        seen = self.tokens
        n = len(seen)
        if context is self._source and len(context) >= n and (n == 0 or context[n - 1] == seen[-1]):
            start = n  # the same list, grown
        elif len(context) >= n and list(context[:n]) == seen:
            start = n  # another list continuing what was indexed
        else:
            start = 0
            seen.clear()
        seen.extend(context[start:])
        self._source = context
        return start


def chain(follower: Callable[[list[int]], int | None], context: Sequence[int], k: int, longest: int) -> list[int]:
    """Up to ``k`` tokens: each ``follower`` of the last ``longest`` tokens so far, drafts included."""
    window = list(context[-longest:])
    out: list[int] = []
    while len(out) < k:
        token = follower(window)
        if token is None:
            break
        out.append(token)
        window = window[1:] + [token] if len(window) >= longest else window + [token]
    return out
