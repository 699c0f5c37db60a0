"""Host-memory copies of recent prompts' KV states, so switching conversations need not re-read them.

When a prefill is about to drop a cached prefix (another conversation's prompt came), the context's
sequence state is copied out with the tokens it holds (``llama_state_seq_get_data``) into a
:class:`PromptStore`; when a later prompt shares a longer prefix with a stored state than with the
live cache, that state is copied back (``llama_state_seq_set_data``) and only the rest is decoded.
The bytes are llama.cpp's own, so a restored cache computes exactly what the live one would have.

The store is least-recently-used within a byte budget. An attention cache can be cut anywhere, so
an entry serves any prompt sharing a prefix with it; a recurrent or hybrid cache holds one state
for its whole token list, so an entry serves only prompts that start with all of it
(``whole_only``). See docs/prompt-cache.md.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import llama_cpp
import numpy as np

from desktop_app.engine.llama.token_prefix import common_prefix

SEQ = 0  # the one sequence our contexts decode into


@dataclass(frozen=True, eq=False)  # entries are told apart by identity (their data is an array)
class SavedPrompt:
    """One sequence state and the tokens its cache held, in order."""

    tokens: tuple[int, ...]
    data: np.ndarray  # uint8: llama.cpp's serialised state of the sequence

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes)


@dataclass(frozen=True)
class PromptCacheUsage:
    """What a store holds now, for the status line and the stats."""

    entries: int
    bytes: int
    budget: int
    tokens: int  # over all entries

    def __add__(self, other: PromptCacheUsage) -> PromptCacheUsage:
        return PromptCacheUsage(
            self.entries + other.entries,
            self.bytes + other.bytes,
            self.budget + other.budget,
            self.tokens + other.tokens,
        )


class PromptStore:
    """Saved prompt states, oldest first, never more than ``budget`` bytes in all (0: off)."""

    def __init__(self, budget: int, whole_only: bool = False) -> None:
        self.budget = max(0, budget)
        self.whole_only = whole_only  # a recurrent/hybrid cache: an entry serves only prompts starting with all of it
        self._entries: list[SavedPrompt] = []
        self.restored = 0  # how many times an entry was used (for the stats and tests)

    @property
    def enabled(self) -> bool:
        return self.budget > 0

    def usage(self) -> PromptCacheUsage:
        return PromptCacheUsage(
            len(self._entries),
            sum(e.nbytes for e in self._entries),
            self.budget,
            sum(len(e.tokens) for e in self._entries),
        )

    def entries(self) -> list[SavedPrompt]:
        """The entries, least recently used first."""
        return list(self._entries)

    def covers(self, tokens: Sequence[int]) -> bool:
        """An entry already serves every prompt these tokens would (it holds them, or more of an
        attention cache); it is marked used."""
        n = len(tokens)
        for entry in self._entries:
            if (len(entry.tokens) == n or (not self.whole_only and len(entry.tokens) > n)) and common_prefix(
                entry.tokens, tokens
            ) == n:
                self._touch(entry)
                return True
        return False

    def add(self, tokens: Sequence[int], data: np.ndarray) -> bool:
        """Keep a state, evicting the least recently used entries until it fits; whether it was
        kept (a state larger than the whole budget is not). Entries it makes redundant go."""
        entry = SavedPrompt(tuple(tokens), data)
        if not self.enabled or entry.nbytes > self.budget:
            return False
        self._entries = [e for e in self._entries if not self._superseded(e, entry)]
        while self._entries and self.usage().bytes + entry.nbytes > self.budget:
            self._entries.pop(0)
        self._entries.append(entry)
        return True

    def best(self, tokens: Sequence[int], limit: int) -> tuple[SavedPrompt, int] | None:
        """The entry that spares the most of ``tokens``, and how many of them it spares (at most
        ``limit``, the prefix the caller may keep); None when none spares any."""
        found: tuple[SavedPrompt, int] | None = None
        for entry in self._entries:
            shared = common_prefix(entry.tokens, tokens)
            if self.whole_only:
                usable = shared if shared == len(entry.tokens) and shared <= limit else 0
            else:
                usable = min(shared, limit)
            if usable > 0 and (found is None or usable > found[1]):
                found = (entry, usable)
        return found

    def used(self, entry: SavedPrompt) -> None:
        self.restored += 1
        self._touch(entry)

    def clear(self) -> None:
        self._entries = []

    def _touch(self, entry: SavedPrompt) -> None:
        """Make an entry the most recent (one evicted meanwhile stays out)."""
        if entry in self._entries:
            self._entries.remove(entry)
            self._entries.append(entry)

    def _superseded(self, old: SavedPrompt, new: SavedPrompt) -> bool:
        """``new`` serves every prompt ``old`` served."""
        if old.tokens == new.tokens:
            return True
        n = len(old.tokens)
        return not self.whole_only and n < len(new.tokens) and new.tokens[:n] == old.tokens


def read_state(ctx: Any) -> np.ndarray | None:
    """A copy of the sequence's state in host memory (None when llama.cpp gives none)."""
    size = int(llama_cpp.llama_state_seq_get_size(ctx, SEQ))
    if size <= 0:
        return None
    data = np.empty(size, np.uint8)  # not zeroed: llama.cpp writes every byte
    written = int(llama_cpp.llama_state_seq_get_data(ctx, _pointer(data), size, SEQ))
    return data[:written] if written > 0 else None


def write_state(ctx: Any, memory: Any, data: np.ndarray) -> bool:
    """Replace the context's whole cache with a saved state; False when llama.cpp refused it
    (the cache is then empty). Clearing first puts the cells where a fresh prefill puts them."""
    llama_cpp.llama_memory_clear(memory, True)
    if int(llama_cpp.llama_state_seq_set_data(ctx, _pointer(data), data.nbytes, SEQ)) > 0:
        return True
    llama_cpp.llama_memory_clear(memory, True)
    return False


def _pointer(data: np.ndarray) -> Any:
    return data.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))
