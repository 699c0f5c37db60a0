"""The text of earlier requests: a window of KEY tokens finds where it last occurred, the copy
says how long the context agrees with it, and the store stays within its bound."""

from __future__ import annotations

from desktop_app.engine.drafters import CopySource
from desktop_app.engine.drafters.ngram_cache import ChatNgrams, NgramCacheDrafter
from desktop_app.engine.drafters.recent_text import HELD_MAX, KEY, RecentText


def _text(seed: int, n: int) -> list[int]:
    return [1000 + seed * 10_000 + i for i in range(n)]


def test_a_prompt_sent_again_is_copied_from_the_answers_first_token() -> None:
    prompt, answer = _text(1, 80), _text(2, 100)
    ngrams = ChatNgrams()
    ngrams.learn_turn(prompt, len(prompt), answer)
    drafter = NgramCacheDrafter(ngrams)
    assert drafter.lookup(list(prompt), HELD_MAX) == answer[:HELD_MAX]
    assert drafter.source is CopySource.EARLIER and drafter.held == HELD_MAX  # the whole prompt agrees
    # a context that shares only the last KEY - 1 tokens is not the same request: no copy (the
    # n-gram counts may still chain a few tokens, rated as such)
    other = [7, *prompt[-(KEY - 1) :]]
    assert ngrams.recent.lookup(other, 8) == ([], 0)
    drafter.lookup(other, 8)
    assert drafter.source is CopySource.OTHER and drafter.held == 0


def test_only_the_new_part_of_a_prompt_is_learned_but_keyed_by_what_came_before() -> None:
    earlier, new, answer = _text(1, 50), _text(2, 30), _text(3, 40)
    ngrams = ChatNgrams()
    ngrams.learn_turn([*earlier, *new], len(new), answer)
    assert len(ngrams.recent) == 1 + min(len(earlier), HELD_MAX) + len(new) + len(answer)
    copy, held = ngrams.recent.lookup([*earlier, *new], 5)
    assert copy == answer[:5] and held == min(len(earlier) + len(new), HELD_MAX)


def test_a_copy_stops_where_its_sequence_ended() -> None:
    recent = RecentText()
    first, second = _text(1, 40), _text(2, 40)
    recent.learn(first)
    recent.learn(second)
    copy, _ = recent.lookup(first[:-3], 20)
    assert copy == first[-3:]  # not running on into the next sequence


def test_the_store_forgets_its_oldest_text_within_its_bound() -> None:
    recent = RecentText(max_tokens=1000)
    texts = [_text(i, 300) for i in range(10)]
    for text in texts:
        recent.learn(text)
        assert len(recent) <= 1000 and recent.windows <= len(recent)
    assert recent.lookup(texts[-1][:100], 4)[0] == texts[-1][100:104]  # the newest is kept
    assert recent.lookup(texts[0][:100], 4) == ([], 0)  # the oldest is forgotten
    long = _text(11, 5000)  # longer than the store: its newest part is kept
    recent.learn(long)
    assert len(recent) <= 1000 and recent.lookup(long[:-10], 4)[0] == long[-10:-6]


def test_deleted_history_forgets_this_runs_text_too() -> None:
    ngrams = ChatNgrams()
    ngrams.learn(_text(1, 100))
    ngrams.use_history(ngrams.history, forget_session=True)
    assert len(ngrams.recent) == 0
