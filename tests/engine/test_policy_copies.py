"""Auto speculation's decisions on model-free copies (prompt lookup, the n-gram cache), from
injected costs and run statistics (pure functions): a copy is judged by how long it has held,
by its source, and by what its verified drafts delivered."""

from __future__ import annotations

import pytest

from desktop_app.engine.auto.policy import AcceptanceTracker, AutoPolicy
from desktop_app.engine.auto.tunables import DEFAULT_TUNABLES, AutoTunables
from tests.engine.policy_costs import COPY_MIN_GAIN, CPU_BATCH, CPU_BATCH_ROWS, MIN_GAIN, costs


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
    assert k >= 7 and gain > COPY_MIN_GAIN  # a new answer carries little evidence: drafted long, with caution
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
    first token). Evidence within the answer still moves the rates both ways, fast. (The carry
    alone: the caution a new answer adds until it shows copies of its own is tested below.)"""
    from desktop_app.engine.auto.policy import RunTracker

    run = RunTracker(AutoTunables(start_caution=0.0))
    for _ in range(50):
        run.observe(0, 12, 12)
        run.observe(20, 12, 12)
    assert min(run.next_rate(length) for length in (1, 2, 5, 20)) > 0.95  # learned within the task
    run.start_answer()
    carried = [run.next_rate(length) for length in (0, 1, 2, 3, 5, 10, 20)]
    assert max(carried) < 0.96 and carried[0] < 0.7
    run.observe(2, 8, 0)  # the new task's first copy breaks at once
    assert run.next_rate(2) < carried[2] - 0.15
    for _ in range(8):
        run.observe(5, 3, 3)
    assert run.next_rate(5) > 0.98


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
    assert k_prompt >= 8 and gain_prompt > COPY_MIN_GAIN
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


def test_drafts_that_keep_delivering_less_than_rated_are_drafted_less() -> None:
    """Copies of every kind rate a proposal 3 tokens into a copy as likely to go on (long copies
    elsewhere keep the rating up), but in this answer each such draft Auto verifies breaks at
    once (code, math: short matches). Auto checks what its verified drafts delivered against
    what they were rated, and stops drafting them after a few; without the check it went on."""
    from desktop_app.engine.auto.policy import RunTracker

    def drafts_made(check_weight: float) -> int:
        tunables = AutoTunables(check_weight=check_weight)
        run = RunTracker(tunables)
        policy = AutoPolicy(costs(CPU_BATCH, 0.0), k_max=8, probe=False, runs=run, tunables=tunables)
        made = 0
        for _ in range(12):
            for _ in range(3):  # long copies elsewhere, scored in the shadow
                policy.streak = 0
                policy.observe_shadow(8, 8)
            policy.streak = 3
            k = policy.offer(8)[0]
            if k:
                made += 1
                policy.observe(k, 0, 0.0, CPU_BATCH[k] * 0.010, k + 1)  # broke at once
        return made

    assert drafts_made(1e9) >= 10  # rated worth it every time
    assert drafts_made(2.0) <= 4


def test_a_new_answer_drafts_short_matches_of_its_own_text_only_on_its_own_evidence() -> None:
    """A rewrite taught the drafter's ratings that copies go on (it copied its prompt, long).
    The next question is a translation: a 2-token match of the answer's own text or of counts
    over the context is rated by that rewrite, and drafting 8 tokens on it lost 8% of a short
    answer in the bench. So for those sources each copy length's carried rating counts only
    once this answer has shown copies of that length (verified or scored in the shadow); a
    copy of the prompt is what this prompt holds and is drafted at once."""
    from desktop_app.engine.auto.policy import RunTracker
    from desktop_app.engine.drafters import CopySource

    def rewrite_then_new_answer(tunables: AutoTunables = DEFAULT_TUNABLES) -> AutoPolicy:
        run = RunTracker(tunables)
        earlier = AutoPolicy(costs(CPU_BATCH_ROWS, 0.0), k_max=8, probe=False, runs=run, tunables=tunables)
        for source in CopySource:
            for _ in range(20):  # long copies of every kind, drafted and taken whole
                earlier.streak = 0
                earlier.observe(8, 8, 0.0, CPU_BATCH_ROWS[8] * 0.010, 9, source)
        # the next answer
        return AutoPolicy(costs(CPU_BATCH_ROWS, 0.0), k_max=8, probe=False, runs=run, tunables=tunables)

    def first_offer(source: CopySource, tunables: AutoTunables = DEFAULT_TUNABLES) -> int:
        policy = rewrite_then_new_answer(tunables)
        policy.streak = 2
        return policy.offer(8, source)[0]

    for source in (CopySource.ANSWER, CopySource.OTHER):
        assert first_offer(source) == 0, source  # a 2-token match on another task's ratings
    assert first_offer(CopySource.PROMPT) > 0  # this prompt's copy: drafted at once

    assert first_offer(CopySource.OTHER, AutoTunables(start_caution=0.0)) > 0  # without the rule it drafted

    policy = rewrite_then_new_answer()
    for _ in range(3):  # this answer's own copies of the context hold (scored in the shadow)
        policy.streak = 0
        policy.observe_shadow(8, 8, CopySource.OTHER)
    policy.streak = 2
    assert policy.offer(8, CopySource.OTHER)[0] > 0
    assert policy.offer(8, CopySource.ANSWER)[0] == 0  # each source shows it for itself


def test_a_copy_of_the_history_that_holds_is_drafted_in_full_without_waiting_for_each_length() -> None:
    """A copy the n-gram cache makes of an earlier answer (a turn that repeats it) starts with
    caution, as any copy not of the prompt. Once it has held a few tokens in this answer it is
    this answer's own: Auto then drafts it in full instead of learning each copy length anew
    (drafted 2, 3, 3, 3, 3, 6, 10 in the bench, where fixed k = 12 took 12 a pass: 7-13% of
    those turns lost). Without the rule, the same 60-token copy takes more passes."""
    from desktop_app.engine.auto.policy import RunTracker
    from desktop_app.engine.drafters import CopySource

    def passes_to_copy(tokens: int, tunables: AutoTunables = DEFAULT_TUNABLES) -> tuple[int, list[int]]:
        run = RunTracker(tunables)
        earlier = AutoPolicy(costs(CPU_BATCH_ROWS, 0.0), k_max=8, probe=False, runs=run, tunables=tunables)
        for source in CopySource:
            for _ in range(20):  # earlier answers: copies of every kind held
                earlier.streak = 0
                earlier.observe(8, 8, 0.0, CPU_BATCH_ROWS[8] * 0.010, 9, source)
                earlier.observe_shadow(8, 8, source)
        policy = AutoPolicy(costs(CPU_BATCH_ROWS, 0.0), k_max=8, probe=False, runs=run, tunables=tunables)
        done, drafts = 0, []
        while done < tokens:
            k = policy.offer(8, CopySource.OTHER)[0]
            drafts.append(k)
            if k:
                policy.observe(k, k, 0.0, CPU_BATCH_ROWS[k] * 0.010, k + 1, CopySource.OTHER)
            policy.observe_shadow(1, 1, CopySource.OTHER)  # the target's own token, as copied
            done += k + 1
        return len(drafts), drafts

    passes, drafts = passes_to_copy(60)
    assert drafts[:2] == [0, 0]  # a new answer's copy of the history starts with caution
    assert passes <= 10 and drafts.count(8) >= 6
    slower, old_drafts = passes_to_copy(60, AutoTunables(proven_run=10**9))
    assert slower >= passes + 2, old_drafts


def test_a_copy_must_promise_more_than_a_model_draft_to_be_drafted() -> None:
    """At this machine's costs, copies of the prompt that held 5 times in 8 from their start
    make a 3-token draft promise about 1.09x. A draft model's proposal promising that much is
    drafted (its acceptance is the pair's own, measured token by token); a model-free copy's is
    a gamble on a copy's first tokens, the kind that lost in the bench's code answers, so it
    must promise COPY_MIN_GAIN. Without that bar the copy is drafted."""
    from desktop_app.engine.auto.policy import RunTracker
    from desktop_app.engine.drafters import CopySource

    def copy_offer(tunables: AutoTunables = DEFAULT_TUNABLES) -> tuple[int, float]:
        run = RunTracker(tunables)
        policy = AutoPolicy(costs(CPU_BATCH_ROWS, 0.0), k_max=8, probe=False, runs=run, tunables=tunables)
        for i in range(8):
            policy.streak = 0
            policy.observe(3, 3 if i < 5 else 0, 0.0, CPU_BATCH_ROWS[3] * 0.010, 4, CopySource.PROMPT)
        policy.streak = 0
        return policy.offer(8, CopySource.PROMPT)

    assert copy_offer() == (0, 1.0)
    k, gain = copy_offer(AutoTunables(copy_min_gain=MIN_GAIN))
    assert k == 3 and MIN_GAIN < gain < COPY_MIN_GAIN

    model = AutoPolicy(costs(CPU_BATCH_ROWS, 0.0), k_max=8, acceptance=AcceptanceTracker(0.66 * 20, 20))
    assert model.choose_k() > 0 and MIN_GAIN < model.predicted_gain < COPY_MIN_GAIN


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
                reach *= run.next_rate(streak + j, source, streak)
                expected.append(expected[-1] + reach)
            assert by_k == pytest.approx(expected, rel=1e-12), (source, streak)


def test_a_source_its_check_held_back_drafts_again_once_its_copies_hold_in_the_shadow() -> None:
    """Two drafts into copies of the prompt broke at once, and the check held the prompt's
    copies back. The answer then copies its prompt again, token after token, scored in the
    shadow: Auto drafts again within a few tokens. The check learned only from verified
    drafts, so none came to lift it; in the bench's typo-fix rewrite Auto decoded 26 tokens one
    at a time while the copy held."""
    from desktop_app.engine.auto.policy import RunTracker
    from desktop_app.engine.drafters import CopySource

    policy = AutoPolicy(costs(CPU_BATCH_ROWS, 0.0), k_max=8, probe=False, runs=RunTracker())
    for _ in range(2):
        policy.streak = 6
        policy.observe(8, 0, 0.0, CPU_BATCH_ROWS[8] * 0.010, 9, CopySource.PROMPT)  # broke at once
    policy.streak = 0
    assert policy.offer(8, CopySource.PROMPT)[0] == 0  # held back
    held = 0
    while policy.offer(8, CopySource.PROMPT)[0] == 0 and held < 40:
        policy.observe_shadow(2, 2, CopySource.PROMPT)  # the copy holds, two tokens at a time
        held += 2
    assert held <= 8


def test_copies_that_held_better_than_rated_do_not_lift_a_draft_where_copies_break() -> None:
    """A rewrite copies its prompt 8 tokens at a time between edits (once 16): each draft of 7
    and the target's next token are taken whole, more than rated, and each copy breaks at its
    9th token. 8 tokens into a copy Auto does not draft into the edit: what copies delivered
    where they held brakes a promise, never lifts it (lifted, a 3-token draft went into it)."""
    from desktop_app.engine.auto.policy import RunTracker
    from desktop_app.engine.drafters import CopySource

    policy = AutoPolicy(costs(CPU_BATCH_ROWS, 0.0), k_max=8, probe=False, runs=RunTracker())
    for length in (16, 8, 8, 8, 8):
        policy.streak = 0
        while policy.streak + 8 <= length:
            policy.observe(7, 7, 0.0, CPU_BATCH_ROWS[7] * 0.010, 8, CopySource.PROMPT)
            policy.observe_shadow(1, 1, CopySource.PROMPT)  # the target's next token: still the copy
        policy.observe_shadow(1, 0, CopySource.PROMPT)  # the edit
    promised, delivered = policy.checks[CopySource.PROMPT]
    assert delivered > promised  # the drafts gave more than rated
    policy.streak = 8
    assert policy.offer(8, CopySource.PROMPT)[0] == 0
