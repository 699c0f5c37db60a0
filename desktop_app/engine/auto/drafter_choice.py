"""Which drafter drafts this cycle, and how many tokens.

With one candidate (speculation on, or a drafter the user chose) this is that drafter and its
policy's k. With several (Auto and the best drafters), every cycle each candidate states what it
offers: a model-free drafter (prompt lookup, n-gram map, n-gram cache) looks its proposal up at
once, for microseconds, and offers the k that its own tracked acceptance and cost make best for
that proposal; a drafter that runs a model offers what its policy expects. The best expected gain
drafts; when none promises a gain, the cycle decodes one token plainly. Model-free proposals that
were not used are scored against what the target then says, so each candidate's acceptance stays
current while another one drafts (as prompt lookup was scored while Auto drafted nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from desktop_app.engine.api import SamplingParams
from desktop_app.engine.auto.policy import AutoPolicy, Policy
from desktop_app.engine.drafters import CopySource, Draft, Drafter
from desktop_app.engine.sampling_noise import SamplingNoise


class ShadowScore:
    """A model-free proposal that was not verified, scored token by token as the target
    commits tokens: each hit tells the drafter's policy that its run goes on, and a miss tells
    it of the departure, so a copy run is noticed as it starts (not when a 12-token proposal has
    been decoded one token at a time)."""

    def __init__(self, drafter: Drafter, policy: Policy) -> None:
        self.drafter = drafter
        self.policy = policy
        self.proposal: list[int] = []
        self.hits = 0
        self.source = CopySource.OTHER

    def offer(self, proposal: list[int], source: CopySource) -> None:
        if not self.proposal and proposal:
            self.proposal, self.hits, self.source = proposal, 0, source

    def drop(self) -> None:
        self.proposal = []

    def see(self, token: int) -> None:
        if not self.proposal:
            return
        hit = token == self.proposal[self.hits]
        self.hits += hit
        self.policy.observe_shadow(1, int(hit), self.source)
        if not hit or self.hits == len(self.proposal):
            self.proposal = []


@dataclass
class Candidate:
    drafter: Drafter
    policy: Policy
    shadow: ShadowScore | None = None  # model-free candidates under Auto
    drafted: int = 0  # this answer: tokens it drafted and how many the target accepted
    accepted: int = 0

    @property
    def name(self) -> str:
        return self.drafter.kind.value


@dataclass
class Plan:
    """This cycle: who drafts (None: nobody) and the draft."""

    candidate: Candidate | None
    k: int
    draft: Draft = field(default_factory=Draft)
    following: int | None = None  # a model-free proposal's token after the k drafted (None: it had no more)


class DrafterChoice:
    """The candidates of one answer, in order of preference (ties go to the earlier one)."""

    def __init__(self, candidates: Sequence[tuple[Drafter, Policy]]) -> None:
        auto = len(candidates) > 1 or any(isinstance(p, AutoPolicy) for _, p in candidates)
        self.candidates = [
            Candidate(d, p, ShadowScore(d, p) if auto and d.free and p.k_max > 0 else None) for d, p in candidates
        ]
        self.k_max = max((c.policy.k_max for c in self.candidates), default=0)

    @property
    def drafters(self) -> list[Drafter]:
        return [c.drafter for c in self.candidates if c.policy.k_max > 0]

    def plan(self, context: list[int], limit: int, params: SamplingParams, noise: SamplingNoise, p_min: float) -> Plan:
        """Choose and draft, at most ``limit`` tokens."""
        if limit <= 0 or not self.candidates:
            self._shadow_offers(context, None, {})
            return Plan(None, 0)
        if len(self.candidates) == 1 and self.candidates[0].shadow is None:
            only = self.candidates[0]
            k = min(only.policy.choose_k(), limit)
            if k > 0:
                if only.shadow is not None:
                    only.shadow.drop()
                return Plan(only, k, only.drafter.draft(context, k, params, noise, p_min))
            return Plan(None, 0)
        best: tuple[float, Candidate, int] | None = None
        proposals: dict[int, tuple[list[int], CopySource]] = {}  # model-free candidates' lookups
        for i, c in enumerate(self.candidates):
            if c.policy.k_max <= 0:
                continue
            if c.drafter.free:
                proposal = c.drafter.lookup(context, min(c.policy.k_max, limit))
                proposals[i] = (proposal, c.drafter.source)
                k, gain = _offer(c.policy, len(proposal), c.drafter.source, c.drafter.held)
            else:
                k = min(c.policy.choose_k(), limit)
                gain = _expected_gain(c.policy) if k > 0 else 1.0
            if k > 0 and (best is None or gain > best[0]):
                best = (gain, c, k)
        chosen = best[1] if best is not None else None
        self._shadow_offers(context, chosen, proposals)
        if best is None:
            return Plan(None, 0)
        _, c, k = best
        index = self.candidates.index(c)
        if c.drafter.free:
            tokens, source = proposals[index]
            return Plan(c, k, Draft(tokens[:k], 0.0, source), tokens[k] if len(tokens) > k else None)
        return Plan(c, k, c.drafter.draft(context, k, params, noise, p_min))

    def _shadow_offers(
        self, context: list[int], chosen: Candidate | None, proposals: dict[int, tuple[list[int], CopySource]]
    ) -> None:
        for i, c in enumerate(self.candidates):
            if c.shadow is None:
                continue
            if c is chosen:
                c.shadow.drop()
            elif not c.shadow.proposal:
                if i in proposals:
                    c.shadow.offer(*proposals[i])
                else:
                    c.shadow.offer(c.drafter.lookup(context, c.policy.k_max), c.drafter.source)

    def observe(self, plan: Plan, accepted: int, verify_s: float, batch: int, bonus: int | None = None) -> None:
        """The chosen candidate hears how its draft did; every policy learns what this target
        pass of ``batch`` rows cost (a cost each of them plans with).

        ``bonus`` is the target's token after a draft it accepted whole: when the copy drafted
        from had a token there too, that token is scored as well. The copy's run is then as
        long as it really was (not counting it, every fully accepted draft cut the run one
        short, and Auto learned that copies break a token earlier than they do)."""
        drafted = len(plan.draft.tokens)
        for c in self.candidates:
            if c is plan.candidate:
                c.policy.observe(drafted, accepted, plan.draft.seconds, verify_s, batch, plan.draft.source)
                if accepted == drafted and bonus is not None and plan.following is not None:
                    c.policy.observe_shadow(1, int(bonus == plan.following), plan.draft.source)
                c.drafted += drafted
                c.accepted += accepted
            else:
                c.policy.observe(0, 0, 0.0, verify_s, batch)

    def see(self, token: int) -> None:
        for c in self.candidates:
            if c.shadow is not None:
                c.shadow.see(token)

    def reason(self) -> str:
        if len(self.candidates) == 1:
            return self.candidates[0].policy.reason()
        drafting = [c for c in self.candidates if c.drafted]
        parts = [f"{c.drafter.kind.label}: {c.policy.reason()}" for c in (drafting or self.candidates[:1])]
        return "; ".join(parts)

    def main_drafter(self) -> str | None:
        """The drafter whose tokens the target accepted most this answer (None: none drafted)."""
        drafting = [c for c in self.candidates if c.drafted]
        if not drafting:
            return None
        return max(drafting, key=lambda c: (c.accepted, c.drafted)).name

    def per_drafter(self) -> dict[str, tuple[int, int]]:
        return {c.name: (c.drafted, c.accepted) for c in self.candidates if c.drafted}


def _offer(policy: Policy, available: int, source: CopySource, held: int) -> tuple[int, float]:
    """The k a policy would draft from a proposal of ``available`` tokens, and its gain."""
    if available <= 0:
        return 0, 1.0
    if isinstance(policy, AutoPolicy):
        return policy.offer(available, source, held)
    return min(policy.choose_k(), available), 1.0


def _expected_gain(policy: Policy) -> float:
    return policy.predicted_gain if isinstance(policy, AutoPolicy) else 1.0
