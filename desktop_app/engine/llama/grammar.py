"""llama.cpp's grammar sampler (GBNF) on llama-cpp-python's low-level API.

A :class:`GrammarState` is one position of a grammar: which tokens it allows next. Checking one
token costs microseconds (a one-entry ``llama_token_data_array`` through ``llama_sampler_apply``);
the mask over the whole vocabulary costs milliseconds (every token's text is matched), so callers
check the token they would pick first and ask for the mask only when it is refused, as llama.cpp's
``common_sampler_sample`` does. ``clone`` copies the state (``llama_sampler_clone``), which is how
a draft is tried without moving the committed state.
"""

from __future__ import annotations

import ctypes
import weakref
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
    """Where an answer stands in its grammar. Use one state from one thread."""

    def __init__(self, sampler: Any, scratch: _Candidates, one: _Candidates) -> None:
        self._sampler = sampler
        self._scratch = scratch  # the whole vocabulary, shared by clones (one thread)
        self._one = one
        self._finalizer = weakref.finalize(self, _free, sampler)

    @classmethod
    def compile(cls, vocab: Any, n_vocab: int, grammar: str) -> GrammarState:
        """The start of ``grammar`` (root rule ``root``) for this vocabulary; GrammarError when
        llama.cpp cannot parse it."""
        return cls(_init(vocab, grammar), _Candidates(n_vocab), _Candidates(1))

    def allows(self, token: int) -> bool:
        """The grammar accepts ``token`` next (an end-of-generation token: the grammar is complete)."""
        return not bool(self._one.refused(self._sampler, np.array([token], dtype=np.intc))[0])

    def allowed(self) -> np.ndarray:
        """A boolean mask over the vocabulary of the tokens the grammar accepts next."""
        return ~self._scratch.refused(self._sampler)

    def accept(self, token: int) -> None:
        """Advance past ``token``, which :meth:`allows` must have said yes to (llama.cpp aborts
        the process on a token its grammar refuses)."""
        llama_cpp.llama_sampler_accept(self._sampler, token)

    def clone(self) -> GrammarState:
        return GrammarState(llama_cpp.llama_sampler_clone(self._sampler), self._scratch, self._one)

    def close(self) -> None:
        self._finalizer()
