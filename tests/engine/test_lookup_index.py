"""The model-free drafters index the context as it grows instead of scanning it every cycle:
what they propose must be what a full scan finds, whatever way the context reaches them."""

from __future__ import annotations

import numpy as np

from desktop_app.engine.api import SamplingParams
from desktop_app.engine.drafters.ngram_counts import ContextFollower, NgramCounts
from desktop_app.engine.drafters.ngram_map import MAP_ORDERS, MAP_RULE, NgramMapDrafter
from desktop_app.engine.drafters.prompt_lookup import PromptLookupDrafter
from desktop_app.engine.sampling_noise import SamplingNoise


def scan_latest_match(context: list[int], longest: int = 4, shortest: int = 3) -> int | None:
    """Where the continuation of the context's last n tokens starts: the latest earlier
    occurrence, longest n first, found by reading the whole context."""
    length = len(context)
    for n in range(min(longest, length - 1), shortest - 1, -1):
        suffix = context[length - n :]
        for start in range(length - n - 1, -1, -1):
            if context[start : start + n] == suffix:
                return start + n
    return None


def test_prompt_lookup_proposes_what_a_scan_of_the_context_finds() -> None:
    """Over 600 random contexts of a small vocabulary (many repeats), each grown token by
    token as the loop grows it, then a new answer's context, then one continuing it."""
    rng = np.random.default_rng(3)
    for _ in range(600):
        drafter = PromptLookupDrafter()
        context = [int(t) for t in rng.integers(0, 6, size=int(rng.integers(2, 12)))]
        for _ in range(int(rng.integers(1, 30))):
            assert drafter._match(context) == scan_latest_match(context)
            context.append(int(rng.integers(0, 6)))
        other = [int(t) for t in rng.integers(0, 6, size=20)]  # the next conversation
        assert drafter._match(other) == scan_latest_match(other)
        continued = [*other, *(int(t) for t in rng.integers(0, 6, size=5))]  # a next turn, a new list
        assert drafter._match(continued) == scan_latest_match(continued)


def test_the_ngram_map_counts_a_context_once_however_it_arrives() -> None:
    rng = np.random.default_rng(5)
    tokens = [int(t) for t in rng.integers(0, 8, size=300)]
    grown = NgramMapDrafter()
    context: list[int] = []
    for token in tokens:
        context.append(token)
        grown.lookup(context, 4)
    grown.lookup(list(tokens) + [1, 2], 4)  # the next turn: a new list continuing it
    whole = NgramCounts(MAP_ORDERS)
    whole.add(tokens + [1, 2])
    assert grown.counts.table == whole.table
    assert grown.counts.chain(tokens, 6, MAP_RULE) == whole.chain(tokens, 6, MAP_RULE)
    grown.lookup([7, 7, 7, 7], 4)  # another conversation: counted from nothing
    assert grown.counts.table == {(7, 7, 7): {7: 1}}


def test_a_context_rewritten_in_place_starts_the_index_over() -> None:
    follower = ContextFollower()
    context = [1, 2, 3, 4]
    assert follower.new_from(context) == 0
    context.append(5)
    assert follower.new_from(context) == 4
    context[-1] = 9  # the same list, its last indexed token changed
    assert follower.new_from(context) == 0 and follower.tokens == [1, 2, 3, 4, 9]


def test_prompt_lookup_says_whether_it_copies_the_prompt_or_the_answer() -> None:
    """Auto learns the two apart (a copied passage holds, a repeated phrase often breaks), so
    each proposal is labelled with where its source lies: before the answer or inside it."""
    from desktop_app.engine.drafters import CopySource

    prompt = [1, 2, 3, 4, 5, 6, 7, 8, 9]
    drafter = PromptLookupDrafter()
    drafter.prepare(prompt, None)
    assert drafter.lookup([*prompt, 2, 3, 4], 3) == [5, 6, 7]  # the answer quotes the prompt
    assert drafter.source is CopySource.PROMPT
    answer = [20, 21, 22, 23, 30, 20, 21, 22]  # ... then repeats a phrase of its own
    assert drafter.lookup([*prompt, *answer], 2) == [23, 30]
    assert drafter.source is CopySource.ANSWER
    assert drafter.draft([*prompt, *answer], 2, SamplingParams(), SamplingNoise(0), 0.0).source is CopySource.ANSWER
