"""Structured output through the real ``openai`` client: ``response_format`` (text, json_object,
json_schema) and the Responses API's ``text.format`` give answers that parse and validate, with
speculation on and drafts accepted; what cannot be kept is refused or fails, never a bad success."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Literal

import jsonschema
import openai
import pytest
from pydantic import BaseModel, Field

from desktop_app.engine_process.protocol import AutoPlan, Load
from tests.server.live_server import Server, engine_backend

ON = {"speculation": "on", "drafter": "model"}
PERSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 8},
        "colour": {"enum": ["red", "green", "blue"]},
        "happy": {"type": "boolean"},
    },
    "required": ["name", "colour", "happy"],
    "additionalProperties": False,
}
PROMPTS = [f"Describe person number {i} as JSON." for i in range(20)]


class Pet(BaseModel):
    name: str = Field(max_length=8)
    kind: Literal["cat", "dog"]
    legs: Literal[3, 4]


@pytest.fixture(scope="module")
def client(models: Any) -> Iterator[openai.OpenAI]:
    """The factory target with its draft model behind a real server."""
    with engine_backend(Load(str(models.target), draft=str(models.draft), plan=AutoPlan(measure=False))) as backend:
        server = Server(backend)
        yield openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0, timeout=120)
        server.stop()


def _schema_format(schema: dict[str, Any]) -> Any:
    return {"type": "json_schema", "json_schema": {"name": "person", "schema": schema, "strict": True}}


def test_parse_with_a_pydantic_model_returns_a_validated_object(client: openai.OpenAI) -> None:
    completion = client.chat.completions.parse(
        model="specchat", messages=[{"role": "user", "content": "A pet?"}], response_format=Pet, extra_body=ON
    )
    pet = completion.choices[0].message.parsed
    assert isinstance(pet, Pet)
    assert pet.kind in ("cat", "dog") and len(pet.name) <= 8


def test_twenty_schema_answers_validate_with_speculation_on_and_drafts_accepted(client: openai.OpenAI) -> None:
    drafted = accepted = 0
    for prompt in PROMPTS:
        completion = client.chat.completions.create(
            model="specchat",
            messages=[{"role": "user", "content": prompt}],
            response_format=_schema_format(PERSON_SCHEMA),
            extra_body=ON,
        )
        content = completion.choices[0].message.content
        assert content is not None
        jsonschema.validate(json.loads(content), PERSON_SCHEMA)
        assert completion.choices[0].finish_reason == "stop"
        timings = (completion.model_extra or {})["timings"]
        drafted += timings["draft_n"]
        accepted += timings["draft_n_accepted"]
    assert drafted > 0 and accepted > 0


def test_json_object_is_a_json_object_or_a_clear_error(client: openai.OpenAI) -> None:
    # any JSON object: a random factory model may not close it within max_tokens, and then the
    # request fails by name rather than returning half an object
    messages: Any = [{"role": "user", "content": "Some JSON please."}]
    try:
        whole = client.chat.completions.create(
            model="specchat", messages=messages, response_format={"type": "json_object"}, max_tokens=40
        )
    except openai.BadRequestError as exc:
        assert exc.code == "response_format_unmet"
    else:
        content = whole.choices[0].message.content
        assert content is not None and isinstance(json.loads(content), dict), content


def test_a_streamed_schema_answer_is_the_whole_answer(client: openai.OpenAI) -> None:
    messages: Any = [{"role": "user", "content": "Who?"}]
    fmt = _schema_format(PERSON_SCHEMA)
    whole = client.chat.completions.create(
        model="specchat", messages=messages, response_format=fmt, temperature=0, extra_body=ON
    )
    stream = client.chat.completions.create(
        model="specchat", messages=messages, response_format=fmt, temperature=0, extra_body=ON, stream=True
    )
    streamed = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert streamed == whole.choices[0].message.content
    jsonschema.validate(json.loads(streamed), PERSON_SCHEMA)


def test_a_text_format_is_plain_text(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(
        model="specchat", messages=[{"role": "user", "content": "Hi"}], response_format={"type": "text"}, max_tokens=8
    )
    assert completion.choices[0].message.content


def test_a_schema_keyword_the_grammar_cannot_keep_is_refused_by_name(client: openai.OpenAI) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}}, "required": ["n"]}
    with pytest.raises(openai.BadRequestError, match="'minimum' is not supported"):
        client.chat.completions.create(
            model="specchat", messages=[{"role": "user", "content": "n?"}], response_format=_schema_format(schema)
        )


def test_an_answer_cut_by_max_tokens_is_an_error_not_an_invalid_success(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="max_tokens") as caught:
        client.chat.completions.create(
            model="specchat",
            messages=[{"role": "user", "content": "Who?"}],
            response_format=_schema_format(PERSON_SCHEMA),
            max_tokens=3,
        )
    assert caught.value.code == "response_format_unmet"


def test_responses_api_text_format_json_schema_validates(client: openai.OpenAI) -> None:
    response = client.responses.create(
        model="specchat",
        input="Describe a person as JSON.",
        text={"format": {"type": "json_schema", "name": "person", "schema": PERSON_SCHEMA, "strict": True}},
        extra_body={"speculation": "on"},
    )
    jsonschema.validate(json.loads(response.output_text), PERSON_SCHEMA)
