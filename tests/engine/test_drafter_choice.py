"""Auto's choice among model-free drafters, driven as the generation loop drives it: a plan each
cycle, the target's verdict, then the committed tokens (no model: the answer is given)."""

from __future__ import annotations

from desktop_app.engine.api import SamplingParams
from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.engine.auto.drafter_choice import DrafterChoice
from desktop_app.engine.auto.policy import AutoPolicy, RunTracker
from desktop_app.engine.drafters import CopySource
from desktop_app.engine.drafters.prompt_lookup import PromptLookupDrafter
from desktop_app.engine.sampling_noise import SamplingNoise

CPU_BATCH = [1.0, 1.73, 2.47, 3.08, 3.5, 4.1, 4.71, 5.34, 5.7]  # this machine: b rows over one


def answer_with(choice: DrafterChoice, prompt: list[int], answer: list[int]) -> dict[int, int]:
    """Tokens drafted at each position of the answer where a cycle began."""
    context, done = list(prompt), 0
    drafted_at: dict[int, int] = {}
    noise = SamplingNoise(0)
    while done < len(answer):
        plan = choice.plan(context, len(answer) - done, SamplingParams(), noise, 0.0)
        drafted = plan.draft.tokens
        drafted_at[done] = len(drafted)
        right = 0
        while right < len(drafted) and done + right < len(answer) and drafted[right] == answer[done + right]:
            right += 1
        whole = right == len(drafted) and done + right < len(answer)
        choice.observe(
            plan, right, 0.01 * CPU_BATCH[len(drafted)], 1 + len(drafted), answer[done + right] if whole else None
        )  # the target's token after a whole draft
        for token in answer[done : done + right + 1]:
            context.append(token)
            choice.see(token)
        done += right + 1
    return drafted_at


def test_auto_learns_copies_of_the_prompt_apart_from_repeats_of_the_answer() -> None:
    """An answer that quotes three passages of the prompt, and between them starts a phrase of
    its own again and again, each time ending it differently (a repeat that breaks). What Auto
    learns of the passages is learned of prompt copies: the repeats' failures do not hold the
    third passage back, which is drafted at its first match, and long from the next pass (told
    apart from them, it waited)."""
    prompt = list(range(100, 200))

    def repeat(ending: int) -> list[int]:
        return [1, 2, 3, ending]

    answer = [
        *repeat(9),
        *prompt[10:30],
        *repeat(8),
        *repeat(7),
        *prompt[40:60],
        *repeat(6),
        *repeat(5),
        *repeat(4),
        *repeat(11),
        *repeat(12),
        *prompt[70:90],
    ]
    drafter = PromptLookupDrafter()
    drafter.prepare(prompt, None)
    run = RunTracker()
    policy = AutoPolicy(CostModel([0.01 * b for b in CPU_BATCH], 2e-5), k_max=8, probe=False, runs=run)
    choice = DrafterChoice([(drafter, policy)])
    drafted_at = answer_with(choice, prompt, answer)
    first_match = [answer.index(prompt[start + 3]) for start in (10, 40, 70)]  # 3 tokens in: a match
    assert drafted_at[first_match[0]] == 0  # a first copy: Auto waits for evidence
    third = [drafted_at.get(first_match[2] + j, 0) for j in range(6)]
    assert third[0] > 0 and max(third) >= 8, third  # the third: drafted at once, long from the next pass
    assert sum(rate.trials for rate in run.rates(CopySource.PROMPT)) > 20
    assert sum(rate.trials for rate in run.rates(CopySource.ANSWER)) >= 4  # the repeats, scored apart
    drafted, accepted = choice.per_drafter()["ngram"]
    assert accepted >= 30 and accepted >= 0.75 * drafted


def test_the_target_s_token_after_a_whole_draft_is_scored_as_part_of_the_copy() -> None:
    """Auto verified 4 tokens of an 8-token copy and the target took them all, then gave its own
    next token: where that is the copy's fifth token, the copy ran 5 tokens, not 4 (counting 4,
    every whole draft cut the copy short and Auto learned that copies break a token before they
    do); where the target departs there, the copy broke at its fifth token."""
    from desktop_app.engine.auto.drafter_choice import Plan
    from desktop_app.engine.drafters import Draft

    prompt = list(range(100, 200))
    context = [*prompt, 110, 111, 112]  # the answer so far repeats prompt[10:13]: a copy of the prompt

    def streak_after(bonus: int) -> tuple[int, float]:
        drafter = PromptLookupDrafter()
        drafter.prepare(prompt, None)
        run = RunTracker()
        policy = AutoPolicy(CostModel([0.01 * b for b in CPU_BATCH], 2e-5), k_max=8, probe=False, runs=run)
        choice = DrafterChoice([(drafter, policy)])
        proposal = drafter.lookup(context, 8)
        assert proposal == list(range(113, 121)) and drafter.source is CopySource.PROMPT
        plan = Plan(choice.candidates[0], 4, Draft(proposal[:4], 0.0, CopySource.PROMPT), proposal[4])
        choice.observe(plan, 4, 0.01 * CPU_BATCH[4], 5, bonus)
        return policy.streak, sum(rate.trials for rate in run.rates(CopySource.PROMPT))

    assert streak_after(117) == (5, 5.0)  # the copy's fifth token: the run goes on
    assert streak_after(999) == (0, 5.0)  # the target departed there: a miss at length 4
