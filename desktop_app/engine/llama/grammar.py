"""llama.cpp's grammar sampler (GBNF) on llama-cpp-python's low-level API.

A :class:`GrammarState` is one position of a grammar: which tokens it allows next. Checking one
token costs microseconds (a one-entry ``llama_token_data_array`` through ``llama_sampler_apply``);
the mask over the whole vocabulary costs milliseconds (every token's text is matched), so callers
check the token they would pick first and ask for the mask only when it is refused, as llama.cpp's
``common_sampler_sample`` does. ``clone`` copies the state (``llama_sampler_clone``), which is how
a draft is tried without moving the committed state.
"""

from __future__ import annotations

import codecs
import ctypes
import weakref
from collections.abc import Callable
from typing import Any

import llama_cpp
import numpy as np

from desktop_app.engine.errors import GrammarError
from desktop_app.engine.grammar_limits import grammar_problem
from desktop_app.engine.llama.backend import clear_log, ensure_backend, recent_log

ROOT = b"root"  # the rule an answer must match (GenerateRequest.grammar's contract)
_TOKEN_DATA = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)


class _Candidates:
    """A reusable ``llama_token_data_array`` over numpy memory (all logits 0: only -inf matters)."""

    def __init__(self, n: int) -> None:
        self.data = np.zeros(n, dtype=_TOKEN_DATA)
        self.ids = np.arange(n, dtype=np.intc)
        self.array = llama_cpp.llama_token_data_array(
            data=self.data.ctypes.data_as(llama_cpp.llama_token_data_p), size=n, selected=-1, sorted=False
        )

    def refused(self, sampler: Any, tokens: np.ndarray | None = None) -> np.ndarray:
        """Which of ``tokens`` (default: every token) the sampler sets to -inf."""
        n = self.data.shape[0] if tokens is None else len(tokens)
        view = self.data[:n]
        view["id"] = self.ids[:n] if tokens is None else tokens
        view["logit"] = 0.0
        self.array.size = n
        self.array.sorted = False
        llama_cpp.llama_sampler_apply(sampler, ctypes.byref(self.array))
        return np.isneginf(view["logit"])


def _init(vocab: Any, grammar: str) -> Any:
    problem = grammar_problem(grammar)  # llama.cpp's recursive parser must never see a grammar it overflows on
    if problem is not None:
        raise GrammarError(problem)
    ensure_backend()
    clear_log()
    sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode("utf-8"), ROOT)
    if not sampler:
        said = [line for line in recent_log(6) if "grammar" in line.lower() or "rule" in line.lower()]
        said = [line for line in said if "error" in line.lower()] or said  # the cause, not "failed to parse"
        detail = f": {said[-1][:200]}" if said else " (a GBNF syntax error, or no rule named 'root')"
        raise GrammarError(f"llama.cpp cannot parse the grammar{detail}")
    return sampler


Piece = Callable[[int], bytes]  # a token's bytes (LlamaModel.piece)
_ALONE: weakref.WeakKeyDictionary[Any, np.ndarray] = weakref.WeakKeyDictionary()


def _utf8_tail(data: bytes) -> bytes | None:
    """The incomplete character at the end of ``data`` (b"": none), or None where ``data`` is not
    UTF-8. Python's decoder is strict where llama.cpp's grammar is not: an overlong form, an
    encoded surrogate or a code point past U+10FFFF is one character to the grammar and one or
    more U+FFFD in the answer's text, which then breaks the schema's lengths."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        decoder.decode(data, final=False)
    except UnicodeDecodeError:
        return None
    return bytes(decoder.getstate()[0])


def _valid_alone(piece: Piece, n_vocab: int) -> np.ndarray:
    """Which tokens are UTF-8 by themselves (a character left open at their end allowed), once a model."""
    owner = getattr(piece, "__self__", None)
    table = _ALONE.get(owner) if owner is not None else None
    if table is None or table.shape[0] != n_vocab:
        table = np.array([_utf8_tail(piece(t)) is not None for t in range(n_vocab)], dtype=bool)
        if owner is not None:
            _ALONE[owner] = table
    return table


def _free(sampler: Any) -> None:
    llama_cpp.llama_sampler_free(sampler)


def parse_problem(grammar: str) -> str | None:
    """Why llama.cpp cannot parse ``grammar`` (None: it can), checked without a model: its own
    guards (repetition counts, left recursion, escapes) said before any request depends on it."""
    try:
        _free(_init(None, grammar))
    except GrammarError as exc:
        return str(exc)
    return None


class GrammarState:
    """Where an answer stands in its grammar, and in its UTF-8: a token that would make the
    answer's bytes invalid UTF-8 is refused as the grammar refuses one (:func:`_utf8_tail`), in
    plain decoding and in a verify pass alike. Use one state from one thread."""

    def __init__(
        self, sampler: Any, scratch: _Candidates, one: _Candidates, piece: Piece, alone: np.ndarray, tail: bytes = b""
    ) -> None:
        self._sampler = sampler
        self._scratch = scratch  # the whole vocabulary, shared by clones (one thread)
        self._one = one
        self._piece = piece
        self._alone = alone
        self._tail = tail  # the bytes of a character the answer has begun and not finished
        self._finalizer = weakref.finalize(self, _free, sampler)

    @classmethod
    def compile(cls, vocab: Any, n_vocab: int, grammar: str, piece: Piece) -> GrammarState:
        """The start of ``grammar`` (root rule ``root``) for this vocabulary (``piece``: a token's
        bytes); GrammarError when llama.cpp cannot parse it."""
        return cls(_init(vocab, grammar), _Candidates(n_vocab), _Candidates(1), piece, _valid_alone(piece, n_vocab))

    def _utf8_allows(self, token: int) -> bool:
        return _utf8_tail(self._tail + self._piece(token)) is not None

    def allows(self, token: int) -> bool:
        """The grammar accepts ``token`` next (an end-of-generation token: the grammar is complete)."""
        if not self._utf8_allows(token):
            return False
        return not bool(self._one.refused(self._sampler, np.array([token], dtype=np.intc))[0])

    def allowed(self) -> np.ndarray:
        """A boolean mask over the vocabulary of the tokens the grammar accepts next."""
        mask = ~self._scratch.refused(self._sampler)
        if not self._tail:
            return mask & self._alone
        for token in np.flatnonzero(mask):  # inside a character: its continuation bytes, rarely many
            mask[token] = self._utf8_allows(int(token))
        return mask

    def accept(self, token: int) -> None:
        """Advance past ``token``, which :meth:`allows` must have said yes to (llama.cpp aborts
        the process on a token its grammar refuses)."""
        llama_cpp.llama_sampler_accept(self._sampler, token)
        self._tail = _utf8_tail(self._tail + self._piece(token)) or b""

    def clone(self) -> GrammarState:
        sampler = llama_cpp.llama_sampler_clone(self._sampler)
        return GrammarState(sampler, self._scratch, self._one, self._piece, self._alone, self._tail)

    def close(self) -> None:
        self._finalizer()
