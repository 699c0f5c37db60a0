"""How the target's verify rows become tokens: freely, or under a request's grammar.

Row ``i`` of a verify pass is the target's distribution after the committed tokens and the first
``i`` drafts. :class:`PlainRows` reads it as it is. :class:`GrammarRows` reads it through the
grammar's state after those same tokens (``GrammarGuide.check`` walked the draft on clones of the
committed state), so every row is the grammar-constrained distribution p' and the acceptance
rule keeps p' exactly (docs/drafting.md, "Drafting under a grammar"):

- greedy: the argmax of the allowed tokens (the row's argmax, checked alone; the vocabulary is
  masked only when the grammar refuses it);
- sampling: p' is the transforms' distribution restricted to the allowed tokens
  (:func:`~desktop_app.engine.sampling.restricted`); a deterministic draft (q one-hot) is
  accepted when a draw from p' equals it, which accepts with probability p'(x) and otherwise
  gives a draw from the residual p' without x, as the rule asks; a drafter's own q goes through
  the rule with the full p';
- a drafted token the grammar refuses has p'(x) = 0: it is a rejection like any other, and the
  replacement comes from the residual max(0, p' - q) (not a fresh draw from p': that would
  give the drafter's refused mass to p' and change the distribution).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from desktop_app.engine.api import SamplingParams
from desktop_app.engine.drafters import Draft
from desktop_app.engine.errors import GrammarError
from desktop_app.engine.llama.grammar import GrammarState
from desktop_app.engine.llama.model import LlamaModel
from desktop_app.engine.sampling import accept_draft, adjusts, next_token, penalize, probabilities, restricted, sample


class Rows(Protocol):
    def greedy(self, i: int) -> int:
        """The argmax of row ``i``'s distribution."""

    def judge(self, i: int, token: int, q: np.ndarray | None, rng: np.random.Generator) -> tuple[bool, int | None]:
        """The acceptance rule for a drafted ``token`` at row ``i`` (see ``accept_draft``)."""

    def draw(self, i: int, rng: np.random.Generator) -> int:
        """A token from row ``i`` (the correction or bonus token)."""


class PenalizedRows:
    """Row ``i``'s scores with the repeat penalty for the committed ``context`` and the first
    ``i`` drafts (as the target would have seen them, one token at a time)."""

    def __init__(
        self, target: LlamaModel, params: SamplingParams, context: Sequence[int] = (), drafted: Sequence[int] = ()
    ) -> None:
        self.target, self.params = target, params
        self._recent = list(context[-params.repeat_last_n :]) if params.penalized else []
        self._drafted = drafted

    def logits(self, i: int) -> np.ndarray:
        if not adjusts(self.params):
            return self.target.logits(i)
        return penalize(self.target.logits(i), self.params, [*self._recent, *self._drafted[:i]])


class PlainRows(PenalizedRows):
    def greedy(self, i: int) -> int:
        return int(np.argmax(self.logits(i)))

    def judge(self, i: int, token: int, q: np.ndarray | None, rng: np.random.Generator) -> tuple[bool, int | None]:
        return accept_draft(probabilities(self.logits(i), self.params), q, token, rng)

    def draw(self, i: int, rng: np.random.Generator) -> int:
        return next_token(self.logits(i), self.params, rng)


class GrammarRows(PenalizedRows):
    """The rows of one verify pass under a grammar: ``states[i]`` is the grammar after the
    committed tokens and the first ``i`` drafts."""

    def __init__(
        self,
        target: LlamaModel,
        params: SamplingParams,
        states: list[GrammarState],
        context: Sequence[int] = (),
        drafted: Sequence[int] = (),
    ) -> None:
        super().__init__(target, params, context, drafted)
        self.states = states

    def _allowed(self, i: int) -> np.ndarray:
        allowed = self.states[i].allowed()
        if not allowed.any():
            raise GrammarError("the grammar allows no token here: the answer cannot go on and match it")
        return allowed

    def greedy(self, i: int) -> int:
        logits = self.logits(i)
        best = int(np.argmax(logits))
        if self.states[i].allows(best):
            return best
        return int(np.argmax(np.where(self._allowed(i), logits, -np.inf)))

    def _probs(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        logits = self.logits(i)
        return probabilities(logits, self.params), logits

    def draw(self, i: int, rng: np.random.Generator) -> int:
        if self.params.greedy:
            return self.greedy(i)
        probs, logits = self._probs(i)
        token = sample(probs, rng)
        if self.states[i].allows(token):
            return token
        return sample(restricted(probs, logits, self._allowed(i), self.params), rng)

    def judge(self, i: int, token: int, q: np.ndarray | None, rng: np.random.Generator) -> tuple[bool, int | None]:
        if q is None:
            drawn = self.draw(i, rng)
            return (True, None) if drawn == token else (False, drawn)
        probs, logits = self._probs(i)
        return accept_draft(restricted(probs, logits, self._allowed(i), self.params), q, token, rng)


class GrammarGuide:
    """One answer's grammar: the committed state, the states a draft walks through, and the
    commit of each verify pass's tokens (the states of rejected drafts are dropped)."""

    def __init__(self, state: GrammarState) -> None:
        self.state = state
        self.states: list[GrammarState] = [state]

    def check(self, draft: Draft) -> int:
        """Walk ``draft`` from the committed state; cut it after its first token the grammar
        refuses (kept: it is verified as a rejection). Returns how many leading drafts the grammar
        allows (the rows after them need no decoding)."""
        self.states = [self.state]
        for token in draft.tokens:
            if not self.states[-1].allows(token):
                del draft.tokens[len(self.states) :], draft.q[len(self.states) :]
                break
            following = self.states[-1].clone()
            following.accept(token)
            self.states.append(following)
        return len(self.states) - 1

    def rows(
        self, target: LlamaModel, params: SamplingParams, context: Sequence[int] = (), drafted: Sequence[int] = ()
    ) -> GrammarRows:
        return GrammarRows(target, params, self.states, context, drafted)

    def commit(self, tokens: list[int], n_accepted: int) -> None:
        """The verify pass kept ``n_accepted`` drafts and then ``tokens[-1]`` (drawn under the
        grammar, so allowed)."""
        kept = self.states[n_accepted]
        for state in self.states:
            if state is not kept:
                state.close()
        kept.accept(tokens[-1])
        self.state, self.states = kept, [kept]

    def close(self) -> None:
        for state in {id(s): s for s in [self.state, *self.states]}.values():
            state.close()
