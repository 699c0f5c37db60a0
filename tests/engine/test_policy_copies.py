"""Auto speculation's decisions on model-free copies (prompt lookup, the n-gram cache), from
injected costs and run statistics (pure functions): a copy is judged by how long it has held,
by its source, and by how much evidence stands behind its rate."""

from __future__ import annotations

import pytest

from desktop_app.engine.auto.policy import AutoPolicy, RunTracker
from desktop_app.engine.auto.tunables import DEFAULT_TUNABLES, AutoTunables
from desktop_app.engine.drafters import CopySource
from tests.engine.policy_costs import CPU_BATCH_ROWS, MIN_GAIN, costs


def test_copied_proposals_are_judged_by_their_first_token_then_the_run() -> None:
    """Model-free proposals fail at their first token or run on. Verifying 9 rows costs 4.4
    tokens (SmolLM2-135M on the 2-core CPU, as calibrated): proposals that run on are drafted
    long; proposals whose first token is usually wrong are not drafted at all, however
    well the rest of the rare good ones did (copies of the prompt: trusted from an answer's start)."""
    from desktop_app.engine.auto.policy import RunTracker
    from desktop_app.engine.drafters import CopySource

    prompt = CopySource.PROMPT

    measured = [1.0, 1.61, 1.99, 2.45, 2.9, 3.31, 3.7, 3.91, 4.4]
    copying = RunTracker()
    for _ in range(30):
        copying.observe(0, 8, 8, prompt)
    policy = AutoPolicy(costs(measured, 0.0), k_max=8, probe=False, runs=copying)
    k, gain = policy.offer(8, prompt)
    assert k >= 7 and gain > MIN_GAIN  # a new answer carries little evidence: drafted long, with caution
    assert 1 <= policy.offer(5, prompt)[0] <= 5  # never more than the proposal holds
    guessing = RunTracker()
    for i in range(30):
        guessing.observe(0, 8, 8 if i % 4 == 0 else 0, prompt)
    policy = AutoPolicy(costs(measured, 0.0), k_max=8, probe=False, runs=guessing)
    assert guessing.rate(1, prompt) > 0.85 and policy.offer(8, prompt) == (0, 1.0)


def test_carried_evidence_never_reads_as_certainty() -> None:
    """After a rewrite's long copies, a new answer (a translation, say) starts with their rates
    carried weakly and each length's prior kept: not at 100% (two carried successes with the
    prior scaled away read as a certainty, and a 7-token draft into a translation failed at its
    first token). Evidence within the answer still moves the rates both ways, fast."""
    from desktop_app.engine.auto.policy import RunTracker

    run = RunTracker()
    for _ in range(50):
        run.observe(0, 12, 12)
        run.observe(20, 12, 12)
    assert min(run.next_rate(length) for length in (1, 2, 5, 20)) > 0.9  # learned within the task
    run.start_answer()
    carried = [run.next_rate(length) for length in (0, 1, 2, 3, 5, 10, 20)]
    assert max(carried) < 0.96 and carried[0] < 0.7
    run.observe(2, 8, 0)  # the new task's first copy breaks at once
    assert run.next_rate(2) < carried[2] - 0.15
    for _ in range(8):
        run.observe(5, 3, 3)
    assert run.next_rate(5) > 0.96


def test_a_copy_of_the_prompt_is_drafted_from_its_start_sooner_than_a_repeat_of_the_answer() -> None:
    """At this machine's costs (9 rows: 5.7 tokens), after two copies that held, Auto drafts at
    the start of the next copy of the prompt (a rewrite's passage), not yet at the start of a
    phrase the answer repeats of itself; and repeats that break do not hold prompt copies back."""
    from desktop_app.engine.auto.policy import RunTracker
    from desktop_app.engine.drafters import CopySource

    measured = [1.0, 1.73, 2.47, 3.08, 3.5, 4.1, 4.71, 5.34, 5.7, 5.93, 6.5, 6.98, 7.49]
    run = RunTracker()
    policy = AutoPolicy(costs(measured, 0.0), k_max=12, probe=False, runs=run)
    for _ in range(2):
        run.observe(0, 8, 8, CopySource.PROMPT)
        run.observe(0, 8, 8, CopySource.ANSWER)
    k_prompt, gain_prompt = policy.offer(12, CopySource.PROMPT)
    assert k_prompt >= 8 and gain_prompt > MIN_GAIN
    assert policy.offer(12, CopySource.ANSWER) == (0, 1.0)
    for _ in range(6):
        run.observe(0, 4, 0, CopySource.ANSWER)
    assert policy.offer(12, CopySource.PROMPT) == (k_prompt, gain_prompt)


def test_a_copy_run_that_holds_drafts_more_than_one_that_just_missed() -> None:
    """The same drafter, the same costs (SmolLM2 on the 2-core CPU: 13 rows cost 7.6 tokens):
    right after a miss its proposals are right half the time, 20 tokens into a copy nearly
    always. After the miss Auto drafts little or nothing; deep in the copy it drafts long."""
    from desktop_app.engine.auto.policy import RunTracker

    measured = [1.0, 1.58, 2.08, 2.57, 3.23, 3.88, 4.39, 4.8, 5.38, 5.97, 6.49, 7.07, 7.6]
    run = RunTracker()
    after_miss = AutoPolicy(costs(measured, 0.0), k_max=12, probe=False, runs=run)
    deep = AutoPolicy(costs(measured, 0.0), k_max=12, probe=False, runs=run, streak=20)
    for i in range(40):  # this answer's copies
        run.observe(0, 12, 12 if i % 2 else 0)  # after a miss: a coin toss
        run.observe(20, 12, 12)  # deep in a copy: whole
    k_miss, gain_miss = after_miss.offer(12)
    k_deep, gain_deep = deep.offer(12)
    assert k_deep == 12 and gain_deep > 1.5
    assert k_miss <= 4 and gain_miss < gain_deep
    assert "20 tokens into a copy" in deep.reason()


def test_the_next_token_is_judged_by_how_long_the_copy_has_held() -> None:
    """Copies that just started (a resumed copy, a lucky match) break at their second token;
    copies that have held for 20 tokens hold on. The rate is the run length's, wherever in a
    proposal the token stands: a 12-token proposal made 20 tokens into a copy is expected to be
    taken whole, one made right after a miss to give its first token and break."""
    from desktop_app.engine.auto.policy import RunTracker

    run = RunTracker()
    for _ in range(60):
        run.observe(0, 12, 1)  # right once, then wrong
        run.observe(20, 12, 12)
    assert run.expected_tokens(20, 12) == pytest.approx(13.0, rel=0.05)
    # the first token, then the priors of lengths never seen past a break: about 2 of 13
    assert run.expected_tokens(0, 12) < 2.6
    assert run.expected_tokens(0, 12) < 1.4 * run.expected_tokens(0, 1)


def test_a_run_told_in_chunks_is_the_same_run() -> None:
    """A proposal scored in the shadow reaches the policy two tokens at a time; a verified one
    in one piece. Both teach the same rates: the run is the same."""
    from desktop_app.engine.auto.policy import RunTracker

    whole, chunks = RunTracker(), RunTracker()
    for _ in range(20):
        whole.observe(0, 13, 12)
        for start in range(0, 12, 2):
            chunks.observe(start, 2, 2)
        chunks.observe(12, 1, 0)
    for length in (0, 1, 5, 12):
        assert whole.next_rate(length) == pytest.approx(chunks.next_rate(length), abs=0.1)
    assert whole.next_rate(12) < 0.85 < 0.95 < whole.next_rate(5)  # the bucket 8-15 holds its break


def test_expected_tokens_of_a_copy_multiply_the_rate_at_each_position() -> None:
    """Auto's expected tokens for a copy proposal (worked out once per length bucket, as Auto
    asks for every candidate every cycle) are the products of the rate at each position's copy
    length, whatever the streak, source and evidence."""
    from desktop_app.engine.auto.policy import RunTracker
    from desktop_app.engine.drafters import CopySource

    run = RunTracker()
    for i in range(40):
        run.observe(i % 19, 6, i % 7, list(CopySource)[i % 3])
    for source in CopySource:
        for streak in (0, 1, 2, 3, 4, 7, 8, 15, 16, 30):
            by_k = run.expected_by_k(streak, 12, source)
            reach, expected = 1.0, [1.0]
            for j in range(12):
                reach *= run.next_rate(streak + j, source)
                expected.append(expected[-1] + reach)
            assert by_k == pytest.approx(expected, rel=1e-12), (source, streak)


def test_a_rate_with_thin_evidence_behind_it_drafts_less() -> None:
    """Two drafters whose copies held every time: one seen once, one seen thirty times. Auto
    plans with each rate's lower credible bound, so the one seen once drafts less (a lucky
    first copy is not a task that copies); without the bound (``caution=0``) both draft alike."""

    def offer(copies: int, tunables: AutoTunables = DEFAULT_TUNABLES) -> tuple[int, float]:
        run = RunTracker(tunables)
        policy = AutoPolicy(costs(CPU_BATCH_ROWS, 0.0), k_max=8, probe=False, runs=run, tunables=tunables)
        for _ in range(copies):  # in this answer
            run.observe(0, 12, 12)
        return policy.offer(8)

    thin, thick = offer(1), offer(30)
    assert thick[0] == 8 and thick[1] > 1.5
    assert thin == (0, 1.0)
    assert offer(1, AutoTunables(caution=0.0))[0] == 8


def test_a_copy_of_the_history_that_holds_is_drafted_in_full_within_a_few_passes() -> None:
    """A new answer repeats an earlier answer (the n-gram cache's copy of the history), rated by
    evidence carried from earlier answers (weighing no more than the prior): it starts short,
    and once the copy has held a few tokens in this answer Auto drafts it in full."""

    run = RunTracker()
    earlier = AutoPolicy(costs(CPU_BATCH_ROWS, 0.0), k_max=8, probe=False, runs=run)
    for _ in range(20):  # earlier answers: copies of every kind held
        for source in CopySource:
            earlier.streak = 0
            earlier.observe(8, 8, 0.0, CPU_BATCH_ROWS[8] * 0.010, 9, source)
    policy = AutoPolicy(costs(CPU_BATCH_ROWS, 0.0), k_max=8, probe=False, runs=run)
    done, drafts = 0, []
    while done < 60:
        k = policy.offer(8, CopySource.OTHER)[0]
        drafts.append(k)
        if k:
            policy.observe(k, k, 0.0, CPU_BATCH_ROWS[k] * 0.010, k + 1, CopySource.OTHER)
        policy.observe_shadow(1, 1, CopySource.OTHER)  # the target's own token, as copied
        done += k + 1
    assert drafts[0] < 8  # a new answer's copy starts with caution
    assert len(drafts) <= 10 and drafts[-3:] == [8, 8, 8]
