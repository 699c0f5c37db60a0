"""Fitting a conversation into the context: how many of its oldest turns to drop, in linear time.

The rule is the one the engine always had: drop the oldest message after any system message,
one at a time, until the rendered prompt leaves room for the answer; never drop the last
message. Rendering and tokenizing the whole conversation once per dropped message made that
quadratic (1001 short turns at a 256-token context: 44 s, holding the engine). Here instead:

1. Each message's content is tokenized once (cached per text: a conversation comes back with
   every request) and only from the newest backwards until the contents alone overflow, so a
   5000-turn conversation tokenizes what can be kept, not all of it.
2. Their sums give a first guess of the first kept message; one render of that guess measures
   the template's markup per message, which gives a second guess.
3. Templates are not exactly additive (markup, BPE merges across boundaries), so the guess is
   checked by rendering: a gallop from it and a binary search find the same first kept message
   as dropping one at a time would, in O(log n) renders of at most the kept part.

Between steps it polls the request's cancel event and a deadline.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from desktop_app.engine.api import Message
from desktop_app.engine.errors import PromptFitTimeoutError

# Fitting 5000 turns takes well under a second here (2 CPU cores); a request that takes 5 s is
# pathological (megabytes of tiny messages) and is refused rather than holding the engine.
FIT_BUDGET_S = 5.0
POLL_EVERY = 256  # messages counted between looks at the cancel event and the clock (~10 ms)
COUNT_CACHE_MAX = 50_000  # cached texts (ints and references to the callers' strings)

Render = Callable[[Sequence[Message]], tuple[str, list[int]]]


class FitCancelled(Exception):
    """The request was cancelled while its prompt was being fitted (not an error to report)."""


class TokenCounts:
    """How many tokens each message text takes, tokenized once per text."""

    def __init__(self, tokenize: Callable[[str], list[int]]) -> None:
        self._tokenize = tokenize
        self._counts: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        count = self._counts.get(text)
        if count is None:
            if len(self._counts) >= COUNT_CACHE_MAX:
                self._counts.clear()  # simpler than LRU; refilled by the next request's newest turns
            count = self._counts[text] = len(self._tokenize(text)) if text else 0
        return count


class PromptFitter:
    """Finds the first message to keep so that the rendered prompt has at most ``limit`` tokens.

    ``render`` turns messages into (prompt text, token ids). Raises FitCancelled when ``cancel``
    is set and PromptFitTimeoutError when fitting outlasts ``budget_s``."""

    def __init__(
        self,
        render: Render,
        counts: TokenCounts,
        limit: int,
        cancel: threading.Event | None = None,
        budget_s: float = FIT_BUDGET_S,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._render = render
        self._counts = counts
        self.limit = limit
        self._cancel = cancel
        self._budget_s = budget_s
        self._clock = clock
        self._deadline = clock() + budget_s
        self._messages: list[Message] = []
        self._first = 0
        self._rendered: dict[int, tuple[str, list[int]]] = {}
        self.renders = 0  # how many times the template was rendered (the tests bound it)

    def fit(self, messages: list[Message]) -> tuple[int, str, list[int]]:
        """(first kept message, prompt text, tokens). When even the last message alone is over
        the limit, it is the one kept (the caller decides whether that still fits at all)."""
        self._messages = messages
        self._first = first = 1 if messages[0]["role"] == "system" else 0
        last = len(messages) - 1
        if last <= first:
            return self._result(last)
        fixed = self._counts(messages[0]["content"]) if first else 0
        # contents[i]: tokens of messages i..last, counted from the newest until they alone overflow
        contents: dict[int, int] = {last + 1: 0}
        k = last
        while k >= first:
            if (last - k) % POLL_EVERY == 0:
                self._poll()
            contents[k] = contents[k + 1] + self._counts(messages[k]["content"])
            if fixed + contents[k] > self.limit:
                break
            k -= 1
        guess = max(k + 1, first) if k >= first else first
        guess = min(guess, last)
        if self._fits(guess):
            return self._result(self._search(first - 1, guess, last))
        # The markup per message, measured on the guess, refines it (markup a turn adds is
        # usually a fixed role header, so the second guess is within a message or two).
        markup = (len(self._tokens(guess)) - fixed - contents[guess]) / (last - guess + 1 + (1 if first else 0))
        better = guess + 1
        while better < last and fixed + contents[better] + markup * (last - better + 1) > self.limit:
            better += 1
        return self._result(self._search(guess, better, last))

    # ------------------------------------------------------------------ steps
    def _search(self, lo: int, guess: int, last: int) -> int:
        """The smallest k in (lo, last] whose prompt fits, or ``last`` when none does; ``lo`` is
        known not to fit (or is first - 1). Fitting is monotone: fewer messages, fewer tokens.
        Gallops from ``guess`` then bisects: O(log distance) renders."""
        if lo >= last:
            return last
        k, step = max(lo + 1, min(guess, last)), 1
        while not self._fits(k):
            lo = k
            if k >= last:
                return last
            k, step = min(k + step, last), step * 2
        hi, step = k, 1
        while hi - 1 > lo:  # is a guess that fits also the first that does?
            k = max(hi - step, lo + 1)
            if not self._fits(k):
                lo = k
                break
            hi, step = k, step * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._fits(mid):
                hi = mid
            else:
                lo = mid
        return hi

    def _fits(self, k: int) -> bool:
        return len(self._tokens(k)) <= self.limit

    def _tokens(self, k: int) -> list[int]:
        return self._rendering(k)[1]

    def _rendering(self, k: int) -> tuple[str, list[int]]:
        """The prompt keeping messages k.. (and any system message), rendered once per k."""
        done = self._rendered.get(k)
        if done is None:
            self._poll()
            head = self._messages[: self._first]
            done = self._rendered[k] = self._render(head + self._messages[k:])
            self.renders += 1
        return done

    def _result(self, k: int) -> tuple[int, str, list[int]]:
        text, tokens = self._rendering(k)
        return k, text, tokens

    def _poll(self) -> None:
        if self._cancel is not None and self._cancel.is_set():
            raise FitCancelled()
        if self._clock() > self._deadline:
            raise PromptFitTimeoutError(
                f"Fitting the conversation ({len(self._messages)} messages) into the context took over "
                f"{self._budget_s:g} s: send fewer or shorter messages"
            )
