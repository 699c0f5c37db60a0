"""How the target's verify rows become tokens: freely, or under a request's grammar.

Row ``i`` of a verify pass is the target's distribution after the committed tokens and the first
``i`` drafts, and its token is the one plain decoding would put at that answer position: the
argmax when greedy, else the Gumbel-max sample with the answer's noise at that position
(:class:`~desktop_app.engine.sampling_noise.SamplingNoise`). A draft is kept exactly when it is
that token, so the tokens do not depend on the drafts (docs/drafting.md).
:class:`PlainRows` reads a row as it is. :class:`GrammarRows` reads it through the grammar's
state after those same tokens (``GrammarGuide.check`` walked the draft on clones of the
committed state), so every row is the grammar-constrained distribution p'
(docs/drafting.md, "Drafting under a grammar"):

- greedy: the argmax of the allowed tokens (the row's argmax, checked alone; the vocabulary is
  masked only when the grammar refuses it);
- sampling: the Gumbel-max sample of p', the transforms' distribution restricted to the allowed
  tokens (:func:`~desktop_app.engine.sampling.restricted`); the winner over all tokens, when the
  grammar allows it, is the winner over the allowed ones, so the mask is again made only when
  the grammar refuses it;
- a drafted token the grammar refuses is never the row's token: a rejection like any other.
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
from desktop_app.engine.sampling import adjusts, penalize, probabilities, restricted
from desktop_app.engine.sampling_noise import SamplingNoise


class Rows(Protocol):
    def token(self, i: int, noise: SamplingNoise) -> int:
        """The target's token at row ``i`` (position ``i`` of ``noise``)."""


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
    def token(self, i: int, noise: SamplingNoise) -> int:
        if self.params.greedy:
            return int(np.argmax(self.logits(i)))
        return noise.pick(probabilities(self.logits(i), self.params), i)


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

    def token(self, i: int, noise: SamplingNoise) -> int:
        if self.params.greedy:
            return self.greedy(i)
        logits = self.logits(i)
        probs = probabilities(logits, self.params)
        token = noise.pick(probs, i)
        if self.states[i].allows(token):
            return token
        return noise.pick(restricted(probs, logits, self._allowed(i), self.params), i)


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
                del draft.tokens[len(self.states) :]
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
