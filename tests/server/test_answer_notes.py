"""What every answer says about itself, on every endpoint, whole and streamed, read through the
real SDKs: llama.cpp-style ``timings`` (they were on chat and completions only, though the
README promised them everywhere); the oldest messages left out of an over-long conversation
(they were dropped without a word: now a ``warnings`` entry and the
``X-SpecChat-Dropped-Messages`` header); and a Responses stream ended by a full context ends with
``response.incomplete``, as OpenAI's does (it ended with ``response.completed``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from desktop_app.engine.api import ModelOptions
from tests.server.conftest import serving
from tests.server.live_server import Server

SMALL_CTX = 256
HEADER = "x-specchat-dropped-messages"


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.target, ModelOptions(n_ctx=SMALL_CTX)) as served:
        yield served


@pytest.fixture(scope="module")
def client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=60)


@pytest.fixture(scope="module")
def claude(server: Server) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.base, api_key="none", max_retries=0, timeout=60)


def turns(n: int) -> list[dict[str, str]]:
    """``n`` messages, user first and last, about 12 tokens each."""
    said = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}: a few more words here"}
        for i in range(n)
    ]
    return said if n % 2 else [*said, {"role": "user", "content": "And now?"}]


LONG, SHORT = turns(61), turns(1)  # 61 messages do not fit 256 tokens; one does


def check_timings(timings: dict[str, Any], output_tokens: int) -> None:
    assert timings["predicted_n"] == output_tokens and timings["prompt_n"] > 0
    assert timings["predicted_per_second"] > 0 and timings["speculation"]["mode"] in ("off", "on", "auto")


def check_dropped(headers: Any, warnings: list[str] | None, sent: int) -> int:
    dropped = int(headers[HEADER])
    assert 0 < dropped < sent
    assert warnings and f"the {dropped:,} oldest messages were left out" in warnings[0]
    return dropped


def test_messages_carry_timings_and_say_what_was_left_out(claude: anthropic.Anthropic) -> None:
    ask: dict[str, Any] = {"model": "x", "max_tokens": 4, "extra_body": {"temperature": 0}}
    raw = claude.messages.with_raw_response.create(messages=LONG, **ask)  # type: ignore[arg-type]
    whole = raw.parse()
    check_timings(whole.model_extra["timings"], whole.usage.output_tokens)  # type: ignore[index]
    dropped = check_dropped(raw.headers, whole.model_extra.get("warnings"), len(LONG))  # type: ignore[union-attr]
    with claude.messages.stream(messages=LONG, **ask) as stream:  # type: ignore[arg-type]
        ending = next(e for e in stream if e.type == "message_delta")
        final = stream.get_final_message()
        headers = stream.response.headers
    check_timings(ending.model_extra["timings"], final.usage.output_tokens)  # type: ignore[index]
    assert check_dropped(headers, ending.model_extra.get("warnings"), len(LONG)) == dropped  # type: ignore[union-attr]
    assert final.content[0].text == whole.content[0].text  # type: ignore[union-attr]
    short = claude.messages.with_raw_response.create(messages=SHORT, **ask)  # type: ignore[arg-type]
    assert HEADER not in short.headers and "warnings" not in (short.parse().model_extra or {})


def test_responses_carry_timings_and_say_what_was_left_out(client: openai.OpenAI) -> None:
    ask: dict[str, Any] = {"model": "x", "input": LONG, "max_output_tokens": 4, "temperature": 0}
    raw = client.responses.with_raw_response.create(**ask)
    whole = raw.parse()
    assert whole.usage is not None
    check_timings(whole.model_extra["timings"], whole.usage.output_tokens)  # type: ignore[index]
    dropped = check_dropped(raw.headers, whole.model_extra.get("warnings"), len(LONG))  # type: ignore[union-attr]
    with client.responses.stream(**ask) as stream:
        events = list(stream)
        headers = stream._response.headers  # type: ignore[attr-defined]
    final = events[-1].response  # type: ignore[union-attr]
    assert final.usage is not None
    check_timings(final.model_extra["timings"], final.usage.output_tokens)  # type: ignore[index]
    assert check_dropped(headers, final.model_extra.get("warnings"), len(LONG)) == dropped  # type: ignore[union-attr]
    short = client.responses.with_raw_response.create(**{**ask, "input": SHORT})
    assert HEADER not in short.headers and "warnings" not in (short.parse().model_extra or {})


def test_chat_says_what_was_left_out(client: openai.OpenAI) -> None:
    ask: dict[str, Any] = {"model": "x", "messages": LONG, "max_tokens": 4, "temperature": 0}
    raw = client.chat.completions.with_raw_response.create(**ask)
    whole = raw.parse()
    dropped = check_dropped(raw.headers, whole.model_extra.get("warnings"), len(LONG))  # type: ignore[union-attr]
    stream = client.chat.completions.with_raw_response.create(**ask, stream=True)
    chunks = list(stream.parse())
    assert check_dropped(stream.headers, chunks[-1].model_extra.get("warnings"), len(LONG)) == dropped  # type: ignore[union-attr]
    assert all("warnings" not in (c.model_extra or {}) for c in chunks[:-1])
    short = client.chat.completions.with_raw_response.create(**{**ask, "messages": SHORT})
    assert HEADER not in short.headers and "warnings" not in (short.parse().model_extra or {})


def test_a_responses_stream_cut_by_a_full_context_ends_incomplete(client: openai.OpenAI) -> None:
    with client.responses.stream(model="x", input="Tell me a long story.", temperature=0) as stream:
        events = list(stream)
    final = events[-1].response  # type: ignore[union-attr]
    assert final.usage is not None and final.usage.total_tokens >= SMALL_CTX - 1  # the context is full
    assert events[-1].type == "response.incomplete" and final.status == "incomplete"
    assert final.incomplete_details is not None and final.incomplete_details.reason == "max_output_tokens"
    whole = client.responses.create(model="x", input="Tell me a long story.", temperature=0)
    assert whole.status == "incomplete" and whole.output_text == final.output_text
