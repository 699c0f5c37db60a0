"""The n-gram map: a hashed table of the context's n-grams and what followed them.

llama.cpp's ``ngram-map`` idea: where prompt lookup copies what followed the *latest* earlier
occurrence of the last few tokens, the map proposes the follower seen *most often* after them,
token by token, and only while it is the clear majority. It is updated as the context grows
(each new token is one table update), so proposing never scans the context.
"""

from __future__ import annotations

from desktop_app.engine.api import DrafterKind
from desktop_app.engine.drafters import Hidden, LookupDrafter
from desktop_app.engine.drafters.ngram_counts import Confidence, ContextFollower, NgramCounts

MAP_ORDERS = (4, 3)  # 3 tokens at least: 2-token matches draft more and worse
MAP_RULE = Confidence(min_count=1, min_share=0.5)


class NgramMapDrafter(LookupDrafter):
    kind = DrafterKind.NGRAM_MAP

    def __init__(self) -> None:
        self.counts = NgramCounts(MAP_ORDERS)
        self._seen = ContextFollower()  # the tokens counted so far (a prefix of the context)

    def _follow(self, context: list[int]) -> None:
        start = self._seen.new_from(context)
        if start == 0:
            self.counts = NgramCounts(MAP_ORDERS)  # a different conversation: start over
        if len(context) > start:
            self.counts.add(context, start=start)

    def prepare(self, context: list[int], hidden: Hidden | None) -> None:
        self._follow(context)

    def lookup(self, context: list[int], k: int) -> list[int]:
        self._follow(context)
        return self.counts.chain(context, k, MAP_RULE) if k > 0 else []
