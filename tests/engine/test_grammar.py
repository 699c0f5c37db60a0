"""A request's grammar (GBNF) shapes every answer, with speculation on as off, and fails closed."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest
from scipy import stats as scistats

from desktop_app.engine import Engine, GenerateRequest, GrammarError, SamplingParams
from desktop_app.engine.llama.grammar import GrammarState
from desktop_app.engine.sampling import probabilities, restricted
from tests.helpers import assert_same_distribution, run, user

# lowercase words ending in a full stop: free enough for the factory pair to agree on drafts
WORDS = r'root ::= ([a-z]+ " ")+ "end."'
WORDS_RE = re.compile(r"([a-z]+ )+end\.")
PERSON = r"""root ::= "{" "\"name\":" "\"" [a-z]{1,8} "\"" "," "\"age\":" [0-9]{1,2} "}" """
PERSON_RE = re.compile(r'\{"name":"[a-z]{1,8}","age":[0-9]{1,2}\}')
PROMPTS = ["Tell me a story about a robot.", "List three colours.", "What is the capital of France?"]


@pytest.mark.parametrize("prompt", PROMPTS)
@pytest.mark.parametrize("drafter", ["model", "ngram"])
def test_greedy_text_under_a_grammar_is_the_same_with_drafts(pair_engine: Engine, prompt: str, drafter: str) -> None:
    plain, _ = run(pair_engine, messages=user(prompt), max_tokens=60, spec="off", grammar=WORDS)
    fast, _ = run(pair_engine, messages=user(prompt), max_tokens=60, spec="on", drafter=drafter, grammar=WORDS)
    assert fast.token_ids == plain.token_ids
    free, _ = run(pair_engine, messages=user(prompt), max_tokens=60, spec="off")
    assert not WORDS_RE.fullmatch(free.text)  # the factory model left alone says something else
    if drafter == "model":
        assert fast.stats.drafted > 0 and fast.stats.accepted > 0
        assert fast.stats.target_passes < plain.stats.target_passes


def test_a_grammar_that_can_end_ends_the_answer_complete(pair_engine: Engine) -> None:
    for spec in ("off", "on"):
        result, _ = run(pair_engine, messages=user("Who?"), max_tokens=40, spec=spec, drafter="model", grammar=PERSON)
        assert PERSON_RE.fullmatch(result.text), result.text
        assert result.stats.finish_reason == "stop"


def test_sampling_under_a_grammar_with_drafts_keeps_the_constrained_distribution(pair_engine: Engine) -> None:
    """Chi-square over four-token answers (top-k 2 under a grammar of letters and spaces: the top two
    allowed, or the allowed ones among the top two), 400 seeds per mode; the draft model's
    proposals are often refused by the grammar, and each refusal is a rejection with the residual."""
    params = {"temperature": 3.0, "top_k": 2}
    grammar = r"root ::= [a-z ]+"
    n = 400
    plain = _sample(pair_engine, "off", n, params, grammar)
    spec = _sample(pair_engine, "on", n, params, grammar)
    assert_same_distribution(plain, spec)

    # Both match the exact first-token distribution p' under the grammar (goodness of fit).
    prompt, _ = pair_engine.build_prompt(GenerateRequest(messages=user("Say something.")))
    target = pair_engine.target
    assert target is not None
    target.prefill(prompt)
    logits = target.logits(-1).copy()
    allowed = GrammarState.compile(target.vocab, target.n_vocab, grammar, target.piece).allowed()
    exact = restricted(probabilities(logits, SamplingParams(**params)), logits, allowed, SamplingParams(**params))
    support = np.flatnonzero(exact)
    assert allowed[support].all()
    for counts in (plain, spec):
        first: Counter[int] = Counter()
        for seq, c in counts.items():
            first[seq[0]] += c
        observed = np.array([first[t] for t in support])
        assert observed.sum() == n
        _, p_fit = scistats.chisquare(observed, exact[support] * n)
        assert p_fit > 0.001, f"first token off the constrained distribution: {observed} vs {exact[support] * n}"


def _sample(engine: Engine, spec: str, n: int, params: dict[str, float], grammar: str) -> Counter[tuple[int, ...]]:
    cycles: list[tuple[int, int]] = []
    counts: Counter[tuple[int, ...]] = Counter()
    for seed in range(n):
        result, _ = run(
            engine,
            messages=user("Say something."),
            max_tokens=4,
            spec=spec,
            draft_max=3,
            drafter="model",
            sampling=SamplingParams(seed=seed, **params),
            grammar=grammar,
        )
        counts[tuple(result.token_ids)] += 1
        cycles.extend(result.stats.cycles)
    if spec == "on":
        assert sum(d for d, _ in cycles) > n and sum(a for _, a in cycles) > 0
    return counts


def test_a_grammar_with_a_dead_end_fails_clearly(pair_engine: Engine) -> None:
    # no token's text starts with a NUL byte: after "a" nothing can follow
    for spec in ("off", "on"):
        with pytest.raises(GrammarError, match="allows no token"):
            run(
                pair_engine,
                messages=user("Hi"),
                max_tokens=20,
                spec=spec,
                drafter="model",
                grammar='root ::= "a" "\\x00"',
            )


@pytest.mark.parametrize(
    "grammar,said",
    [("root ::= (", "cannot parse"), ('answer ::= "a"', "root"), ('root ::= root "a"', "cannot parse")],
)
def test_a_grammar_llama_cpp_cannot_parse_fails_before_any_token(pair_engine: Engine, grammar: str, said: str) -> None:
    events = pair_engine.generate(GenerateRequest(messages=user("Hi"), grammar=grammar))
    with pytest.raises(GrammarError, match=said):
        next(events)


def test_an_empty_grammar_is_refused_when_the_request_is_made() -> None:
    with pytest.raises(ValueError, match="GBNF"):
        GenerateRequest(messages=user("Hi"), grammar="  ")


def test_a_grammar_refuses_tokens_that_would_make_the_answer_invalid_utf8(default_model) -> None:  # type: ignore[no-untyped-def]
    """llama.cpp's grammar counts an overlong or broken byte sequence as one character; the answer's
    text shows U+FFFD for it, and a schema's maxLength counted on that text broke (a 500). The
    state refuses such a token, in plain decoding and in a verify pass alike (both use it)."""
    from desktop_app.engine.api import ModelOptions
    from desktop_app.engine.llama.model import LlamaModel

    model = LlamaModel(default_model, ModelOptions(n_gpu_layers=0, n_threads=1, n_ctx=256))
    try:
        by_bytes = {model.piece(t): t for t in range(model.n_vocab)}
        lone, lead, cont, letter = by_bytes[b"\x80"], by_bytes[b"\xc3"], by_bytes[b"\xa9"], by_bytes[b"a"]
        state = GrammarState.compile(model.vocab, model.n_vocab, 'root ::= [^"]*', model.piece)
        assert not state.allows(lone) and state.allows(lead) and state.allows(letter)
        allowed = state.allowed()
        assert not allowed[lone] and allowed[lead] and allowed[letter]
        state.accept(lead)  # "é" begun: only its continuation may follow
        assert state.allows(cont) and not state.allows(letter)
        allowed = state.allowed()
        assert allowed[cont] and not allowed[letter]
        branch = state.clone()
        branch.accept(cont)
        assert branch.allows(letter) and not state.allows(letter)  # a clone keeps its own place
    finally:
        model.close()
