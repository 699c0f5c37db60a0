"""A lazy grammar (``GenerateRequest.grammar_triggers``, what ``tool_choice`` "auto" uses): the
answer is the model's own until a trigger matches, the grammar's from there, and speculation
changes nothing (greedy: the same tokens); and ``logit_bias`` in the engine's transforms."""

from __future__ import annotations

import json
import re

import pytest

from desktop_app.engine import Engine, EngineError, SamplingParams
from desktop_app.engine.api import Tool
from desktop_app.engine.llama.grammar import GrammarState
from desktop_app.engine.loop.lazy_grammar import LazyGrammar
from desktop_app.engine.reasoning import THINK_TAGS
from desktop_app.engine.tool_calls import (
    GEMMA4,
    GENERIC,
    GPT_OSS,
    HERMES,
    LLAMA3,
    MISTRAL,
    TOOL_FORMATS,
    ToolFormat,
    parse_tool_calls,
)
from desktop_app.server.tool_grammar import tool_call_grammar
from tests.helpers import run, user

ASK = user("Tell me a story about a robot.")


def _free(engine: Engine) -> tuple[str, list[bytes]]:
    free, _ = run(engine, messages=ASK, max_tokens=30, spec="off")
    return free.text, [engine.target.piece(t) for t in free.token_ids]  # type: ignore[union-attr]


def _token_with_text(pieces: list[bytes], at_least: int) -> int:
    """The first token from the 6th on whose piece is ASCII letters of ``at_least`` or more."""
    return next(k for k in range(5, len(pieces)) if len(pieces[k].strip()) >= at_least and pieces[k].isascii())


@pytest.mark.parametrize("spec", ["off", "on"])
def test_the_answer_is_free_until_the_trigger_then_the_grammar_s(pair_engine: Engine, spec: str) -> None:
    text, pieces = _free(pair_engine)
    k = _token_with_text(pieces, 3)
    # The trigger starts inside token k-1 and ends with token k: the grammar reads it from its first character.
    upto = b"".join(pieces[: k + 1]).decode()
    trigger = upto[-(len(pieces[k]) + 2) :]
    assert text.find(trigger) == len(upto) - len(trigger)  # its first match ends with token k
    grammar = f'root ::= {json.dumps(trigger)} " lazy grammar."'
    lazy, _ = run(
        pair_engine, messages=ASK, max_tokens=30, spec=spec, drafter="model", grammar=grammar,
        grammar_triggers=(re.escape(trigger),),
    )  # fmt: skip
    assert lazy.text == upto + " lazy grammar."  # the model's own words, then the grammar's, then the end
    assert lazy.stats.finish_reason == "stop"
    if spec == "on":
        assert lazy.stats.drafted > 0 and lazy.stats.accepted > 0
        plain, _ = run(pair_engine, messages=ASK, max_tokens=30, spec="off", grammar=grammar, grammar_triggers=(re.escape(trigger),))  # fmt: skip
        assert lazy.token_ids == plain.token_ids


def test_a_trigger_whose_token_writes_past_what_the_grammar_takes_leaves_the_answer_free(pair_engine: Engine) -> None:
    text, pieces = _free(pair_engine)
    k = _token_with_text(pieces, 4)
    upto = b"".join(pieces[:k]).decode()
    trigger = pieces[k].decode()[:2]  # completed by token k, which goes on with letters " lazy" does not start with
    assert text.find(trigger) == len(upto)
    grammar = f'root ::= {json.dumps(trigger)} " lazy"'
    lazy, _ = run(pair_engine, messages=ASK, max_tokens=30, spec="on", grammar=grammar, grammar_triggers=(re.escape(trigger),))  # fmt: skip
    assert lazy.text == text


def test_logit_bias_bans_and_forces_tokens_with_drafts_as_without(pair_engine: Engine) -> None:
    free, _ = run(pair_engine, messages=ASK, max_tokens=30, spec="off")
    banned = {t: -100.0 for t in free.token_ids[:10]}
    answers = [
        run(pair_engine, messages=ASK, max_tokens=30, spec=spec, drafter="model", sampling=_bias(banned))[0]
        for spec in ("off", "on")
    ]
    assert answers[0].token_ids == answers[1].token_ids and answers[1].stats.accepted > 0
    assert not set(banned) & set(answers[0].token_ids)
    forced, _ = run(pair_engine, messages=ASK, max_tokens=8, spec="on", sampling=_bias({free.token_ids[3]: 100.0}))
    assert forced.token_ids == [free.token_ids[3]] * 8


def test_logit_bias_names_tokens_of_the_vocabulary(pair_engine: Engine) -> None:
    n_vocab = pair_engine.target.n_vocab  # type: ignore[union-attr]
    with pytest.raises(EngineError, match=f"token id {n_vocab}.*ids 0 to {n_vocab - 1}"):
        run(pair_engine, messages=ASK, max_tokens=2, sampling=_bias({n_vocab: 1.0}))
    with pytest.raises(ValueError, match="logit_bias must be between -100.0 and 100.0, not 101.0"):
        _bias({1: 101.0})


def _bias(bias: dict[int, float]) -> SamplingParams:
    return SamplingParams(logit_bias=tuple(bias.items()))


# One call of get_weather as each family writes it; the text before the call's grammar (Llama's
# <|python_tag|>) is the model's own.
CALLS = {
    HERMES: '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    LLAMA3: '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}',
    MISTRAL: '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]',
    GEMMA4: '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>',
    GPT_OSS: '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}',
    GENERIC: '{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}, '
    '{"name": "get_weather", "arguments": {"city": "Lima"}}]}',
}
WEATHER: Tool = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Lima"]}}, "required": ["city"]}}}  # fmt: skip


@pytest.mark.parametrize("fmt", (*TOOL_FORMATS, GENERIC), ids=lambda f: f.name)
def test_each_family_s_trigger_starts_text_its_call_grammar_takes(pair_engine: Engine, fmt: ToolFormat) -> None:
    target = pair_engine.target
    assert target is not None
    whole = fmt in (LLAMA3, GENERIC)  # Llama's and the generic calls are whole answers
    text = CALLS[fmt] if whole else "Let me check. " + CALLS[fmt]
    found = re.search(fmt.trigger, text)
    assert found is not None
    start = found.start(1) if found.lastindex else found.start()
    state = GrammarState.compile(
        target.vocab, target.n_vocab, tool_call_grammar(fmt, [WEATHER], parallel=True), target.piece
    )
    for token in target.tokenize(text[start:], add_special=False, parse_special=True):
        assert state.allows(token), (fmt.name, target.piece(token))
        state.accept(token)
    assert state.allows(target.eos_id)  # the call is complete: the answer may end
    assert parse_tool_calls(text, fmt).calls[0].name == "get_weather"


def test_a_trigger_inside_the_reasoning_section_does_not_count(pair_engine: Engine) -> None:
    target = pair_engine.target
    assert target is not None
    start = GrammarState.compile(target.vocab, target.n_vocab, 'root ::= "<tool_call>" [a-z]*', target.piece)
    lazy = LazyGrammar(target, start, [HERMES.trigger], THINK_TAGS, opened="<think>")
    assert lazy.trigger_at(b"<think>\nI could write <tool_call> here") is None  # still reasoning
    answer = b"<think>\nI could write <tool_call> here\n</think>\n\nSure: <tool_call>"
    assert lazy.trigger_at(answer) == answer.rindex(b"<tool_call>")
    lazy.close()
