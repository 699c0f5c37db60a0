"""Thinking end to end in the engine, with the factory's thinking model (a Qwen3.5-style
template on the factory target's weights): the Think switch reaches the template, an earlier
answer's reasoning stays out of the next prompt's tokens, and the stats count the reasoning
section's tokens and drafts apart from the answer's."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from desktop_app.engine import Engine
from desktop_app.engine.api import GenerateRequest, Message, ModelOptions, SpecMode
from desktop_app.engine.events import Finished
from desktop_app.engine.llama.model import LlamaModel
from desktop_app.engine.reasoning import THINK_TAGS, split_reasoning


@pytest.fixture(scope="module")
def thinking_engine(models) -> Iterator[Engine]:
    """The thinking model with the factory draft (the same first layers: it drafts well)."""
    engine = Engine()
    engine.load_target(models.thinking)
    engine.load_draft(models.draft)
    yield engine
    engine.close()


def answer(engine: Engine, request: GenerateRequest) -> Finished:
    events = [e for e in engine.generate(request) if isinstance(e, Finished)]
    return events[-1]


def contains(tokens: list[int], part: list[int]) -> bool:
    return any(tokens[i : i + len(part)] == part for i in range(len(tokens) - len(part) + 1))


HI = [Message(role="user", content="Hi")]


def test_the_loaded_model_says_it_thinks_and_has_a_switch(thinking_engine: Engine, models) -> None:
    info = thinking_engine.loaded().target
    assert info.reasoning_format == THINK_TAGS and info.has_think_switch and info.think_default is True
    plain = Engine()
    try:
        plain_info = plain.load_target(models.target)
    finally:
        plain.close()
    assert plain_info.reasoning_format is None and not plain_info.has_think_switch


def test_the_think_switch_renders_the_template_each_way(thinking_engine: Engine) -> None:
    target = thinking_engine.target
    assert target is not None
    prompts = {
        think: thinking_engine.build_prompt(GenerateRequest(messages=HI, think=think))[0]
        for think in (None, True, False)
    }
    assert prompts[None] == prompts[True] != prompts[False]
    assert target.detokenize(prompts[True]).endswith("assistant\n<think>\n")  # special tokens read as ""
    assert target.detokenize(prompts[False]).endswith("<think>\n\n</think>\n\n")


def test_an_earlier_answers_reasoning_is_not_in_the_next_prompt(thinking_engine: Engine) -> None:
    target = thinking_engine.target
    assert target is not None
    reasoning = "the user wants zebra arithmetic done quietly"
    conversation = [
        Message(role="user", content="What is 2+2?"),
        Message(role="assistant", content=f"<think>\n{reasoning}\n</think>\n\nIt is 4."),
        Message(role="user", content="And 3+3?"),
    ]
    tokens, _dropped = thinking_engine.build_prompt(GenerateRequest(messages=conversation))
    assert not contains(tokens, target.tokenize(reasoning, add_special=False))
    assert "zebra" not in target.detokenize(tokens)
    assert contains(tokens, target.tokenize("It is 4.", add_special=False))


def pieces(target: LlamaModel, tokens: list[int]) -> list[str]:
    return [target.piece(t).decode(errors="replace") for t in tokens]


def test_stats_count_thinking_and_answer_apart_in_an_answer_that_starts_open(thinking_engine: Engine) -> None:
    target = thinking_engine.target
    assert target is not None
    request = GenerateRequest(messages=HI, max_tokens=40, spec=SpecMode.ON)
    first = answer(thinking_engine, request)
    s = first.stats
    # the prompt opened the section: the text carries its marker, every token is thinking
    assert first.text.startswith("<think>\n") and split_reasoning(first.text).thinking
    assert s.thinking_tokens == s.generated_tokens == 40 and s.thinking_s > 0
    assert (s.thinking_drafted, s.thinking_accepted) == (s.drafted, s.accepted) and s.drafted > 0
    # The same (greedy) answer again, with an end marker the model writes mid-way: the tokens
    # up to it are thinking, the rest answer, and the drafts part the same way.
    texts = pieces(target, first.token_ids)
    k = next(i for i in range(15, 35) if len(texts[i].strip()) > 2 and "".join(texts[:i]).count(texts[i].strip()) == 0)
    end = texts[k].strip()
    prompts = thinking_engine.prompts
    saved = prompts.reasoning
    prompts.reasoning = replace(saved, format=replace(THINK_TAGS, end=end))
    try:
        again = answer(thinking_engine, request)
    finally:
        prompts.reasoning = saved
    t = again.stats
    assert again.token_ids == first.token_ids
    assert t.thinking_tokens == k + 1 and t.generated_tokens - t.thinking_tokens == 40 - (k + 1)
    assert 0 < t.thinking_drafted < t.drafted and t.thinking_accepted <= t.accepted
    assert 0 < t.thinking_s <= t.decode_s + t.prefill_s
    # Think off: the template closed the section, nothing is thinking
    off = answer(thinking_engine, replace(request, think=False))
    assert not off.text.startswith("<think>") and off.stats.thinking_tokens == 0 and off.stats.thinking_drafted == 0


def test_a_marker_that_is_a_special_token_shows_in_the_text(models) -> None:
    """gpt-oss's and Gemma 4's markers are control tokens, which the detokenizer drops: the
    engine shows those of its format (here SmolLM2's control token "<|im_start|>" stands in)."""
    model = LlamaModel(models.target, ModelOptions(n_ctx=64))
    try:
        [im_start] = model.tokenize("<|im_start|>", add_special=False)
        assert model.piece(im_start) == b""
        model.show_special(["<|im_start|>assistant"])
        assert model.detokenize([im_start]) == "<|im_start|>"
    finally:
        model.close()
