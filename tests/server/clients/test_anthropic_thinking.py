"""Anthropic's extended thinking on /v1/messages with the real anthropic SDK, on the factory's
thinking model (a Qwen3.5-style template whose generation prompt opens ``<think>`` unless
``enable_thinking`` is false): ``thinking`` enabled or adaptive gives the reasoning as a signed
``thinking`` block apart from the text, whole and streamed (``thinking_delta`` events), the same
split as the OpenAI endpoint's ``reasoning_content``; disabled gives none; thinking blocks sent
back are accepted and the template leaves them out of the prompt before the last question;
``count_tokens`` is the answer's ``usage.input_tokens``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from tests.server.conftest import serving
from tests.server.live_server import Server

ASK = [{"role": "user", "content": "Is 7 a prime number?"}]
GREEDY = {"temperature": 0}  # the 2026 SDK sends no temperature of its own
ENABLED = {"type": "enabled", "budget_tokens": 1024}


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.thinking) as served:
        yield served


@pytest.fixture()
def client(server: Server) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.base, api_key="none", max_retries=0, timeout=120)


def _openai_reasoning(server: Server, max_tokens: int) -> tuple[str, str]:
    client = openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)
    reply = client.chat.completions.create(model="x", messages=ASK, max_tokens=max_tokens, temperature=0)  # type: ignore[arg-type]
    message = reply.choices[0].message
    return str((message.model_extra or {}).get("reasoning_content") or ""), message.content or ""


def test_thinking_comes_back_as_a_signed_block_apart_from_the_text(client: anthropic.Anthropic, server: Server) -> None:
    message = client.messages.create(model="x", max_tokens=24, messages=ASK, thinking=ENABLED, extra_body=GREEDY)  # type: ignore[arg-type]
    thinking = [b for b in message.content if b.type == "thinking"]
    text = "".join(b.text for b in message.content if b.type == "text")
    assert [b.type for b in message.content][0] == "thinking" and len(thinking) == 1
    assert thinking[0].thinking and "<think>" not in thinking[0].thinking and thinking[0].signature
    # The window's parser split it: the OpenAI endpoint's reasoning_content and content, the same.
    assert (thinking[0].thinking, text) == _openai_reasoning(server, 24)
    assert thinking[0].thinking not in text
    adaptive = client.messages.create(
        model="x",
        max_tokens=24,
        messages=ASK,
        thinking={"type": "adaptive"},
        extra_body=GREEDY,  # type: ignore[arg-type]
    )
    assert adaptive.content == message.content


def test_streamed_thinking_adds_up_to_the_whole_message(client: anthropic.Anthropic) -> None:
    whole = client.messages.create(model="x", max_tokens=24, messages=ASK, thinking=ENABLED, extra_body=GREEDY)  # type: ignore[arg-type]
    with client.messages.stream(
        model="x",
        max_tokens=24,
        messages=ASK,
        thinking=ENABLED,
        extra_body=GREEDY,  # type: ignore[arg-type]
    ) as stream:
        events = list(stream)
        final = stream.get_final_message()
    starts = [e.content_block.type for e in events if e.type == "content_block_start"]
    deltas = [e.delta for e in events if e.type == "content_block_delta"]
    assert starts[0] == "thinking"
    assert "".join(d.thinking for d in deltas if d.type == "thinking_delta") == whole.content[0].thinking  # type: ignore[union-attr]
    assert any(d.type == "signature_delta" for d in deltas)
    assert final.content == whole.content and final.usage.output_tokens == 24


def test_thinking_disabled_gives_no_thinking_block(client: anthropic.Anthropic) -> None:
    for stream in (False, True):
        message = client.messages.create(
            model="x",
            max_tokens=12,
            messages=ASK,
            thinking={"type": "disabled"},
            extra_body=GREEDY,
            stream=stream,  # type: ignore[arg-type, call-overload]
        )
        if stream:
            kinds = {e.content_block.type for e in message if e.type == "content_block_start"}  # type: ignore[attr-defined]
            assert kinds == {"text"}
            continue
        assert [b.type for b in message.content] == ["text"]
        assert message.content[0].text and "<think>" not in message.content[0].text  # type: ignore[union-attr]
    default = client.messages.create(model="x", max_tokens=12, messages=ASK, extra_body=GREEDY)  # type: ignore[arg-type]
    assert default.content[0].type == "thinking"  # absent: the template's default, on for this one


def test_thinking_sent_back_is_accepted_and_left_out_before_the_last_question(client: anthropic.Anthropic) -> None:
    first = client.messages.create(model="x", max_tokens=16, messages=ASK, thinking=ENABLED, extra_body=GREEDY)  # type: ignore[arg-type]
    blocks = [b.model_dump() for b in first.content]
    assert blocks[0]["type"] == "thinking"
    answer = {"type": "text", "text": "Yes."}
    again = {"role": "user", "content": "And 9?"}
    with_thought = [*ASK, {"role": "assistant", "content": [blocks[0], answer]}, again]
    without = [*ASK, {"role": "assistant", "content": [answer]}, again]
    reply = client.messages.create(model="x", max_tokens=8, messages=with_thought, thinking=ENABLED, extra_body=GREEDY)  # type: ignore[arg-type]
    plain = client.messages.create(model="x", max_tokens=8, messages=without, thinking=ENABLED, extra_body=GREEDY)  # type: ignore[arg-type]
    assert reply.usage.input_tokens == plain.usage.input_tokens  # the template left it out
    assert reply.content == plain.content
    # After the last question (a turn the model is still on), the template keeps it: it is read.
    kept = client.messages.count_tokens(
        model="x", messages=[*ASK, {"role": "assistant", "content": [blocks[0], answer]}]
    )  # type: ignore[list-item]
    bare = client.messages.count_tokens(model="x", messages=[*ASK, {"role": "assistant", "content": [answer]}])  # type: ignore[list-item]
    assert kept.input_tokens > bare.input_tokens


def test_count_tokens_is_the_answers_input_tokens(client: anthropic.Anthropic) -> None:
    system = [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}]
    for thinking in (ENABLED, {"type": "disabled"}):
        counted = client.messages.count_tokens(model="x", system=system, messages=ASK, thinking=thinking)  # type: ignore[arg-type]
        answered = client.messages.create(
            model="x",
            max_tokens=4,
            system=system,
            messages=ASK,
            thinking=thinking,
            extra_body=GREEDY,  # type: ignore[arg-type]
        )
        assert counted.input_tokens == answered.usage.input_tokens > 10
    on = client.messages.count_tokens(model="x", messages=ASK, thinking=ENABLED)  # type: ignore[arg-type]
    off = client.messages.count_tokens(model="x", messages=ASK, thinking={"type": "disabled"})  # type: ignore[arg-type]
    assert off.input_tokens > on.input_tokens  # the switch reached the template: "<think>\n\n</think>\n\n"
