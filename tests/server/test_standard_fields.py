"""Every field of the installed SDKs' current request types is known to its endpoint (used,
ignored, or accepted at its neutral value: desktop_app/server/request_fields.py), and so are
llama.cpp's fields that front ends send; bodies carrying them, as the real SDKs and Codex send
them, are answered by the real server; llama.cpp's sampling fields are used, not only accepted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2 as httpx
import openai
import pytest
from anthropic.types import message_count_tokens_params, message_create_params
from anthropic.types.beta import message_count_tokens_params as beta_count_params
from anthropic.types.beta import message_create_params as beta_create_params
from openai.types import completion_create_params
from openai.types.chat import completion_create_params as chat_create_params
from openai.types.responses import response_create_params

from desktop_app.server import anthropic_api, infill_api, openai_schema, responses_api
from desktop_app.server.engine_backend import EngineBackend
from desktop_app.server.request_fields import NEUTRAL, Accepted
from tests.server.live_server import Server

SDK_TYPES: list[tuple[str, Accepted, Any]] = [
    ("chat", openai_schema.CHAT, chat_create_params.CompletionCreateParamsStreaming),
    ("completions", openai_schema.COMPLETIONS, completion_create_params.CompletionCreateParamsStreaming),
    ("responses", responses_api.ACCEPTED, response_create_params.ResponseCreateParamsStreaming),
    ("messages", anthropic_api.ACCEPTED, message_create_params.MessageCreateParamsStreaming),
    ("messages (beta)", anthropic_api.ACCEPTED, beta_create_params.MessageCreateParamsStreaming),
    ("count_tokens", anthropic_api.ACCEPTED, message_count_tokens_params.MessageCountTokensParams),
    ("count_tokens (beta)", anthropic_api.ACCEPTED, beta_count_params.MessageCountTokensParams),
]
# What llama.cpp front ends (its web UI, Open WebUI, SillyTavern) send beside OpenAI's fields.
LLAMA_FIELDS = {"top_k", "min_p", "repeat_penalty", "repeat_last_n", "seed", "cache_prompt", "samplers"} | {
    "typical_p",
    "mirostat",
    "mirostat_tau",
    "mirostat_eta",
    "dry_multiplier",
    "dry_base",
    "xtc_probability",
    "xtc_threshold",
    "dynatemp_range",
    "n_probs",
    "timings_per_token",
    "t_max_predict_ms",
}
ENDPOINTS = {
    "chat": openai_schema.CHAT,
    "completions": openai_schema.COMPLETIONS,
    "responses": responses_api.ACCEPTED,
    "messages": anthropic_api.ACCEPTED,
    "infill": infill_api.ACCEPTED,
}
QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


@pytest.mark.parametrize(("name", "fields", "typed"), SDK_TYPES, ids=[t[0] for t in SDK_TYPES])
def test_every_field_of_the_sdks_request_types_is_known(name: str, fields: Accepted, typed: Any) -> None:
    assert set(typed.__annotations__) - fields.known == set(), name


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_llama_cpps_sampling_fields_are_known_on_every_endpoint(endpoint: str) -> None:
    fields = ENDPOINTS[endpoint]
    assert LLAMA_FIELDS - fields.known == set()
    assert fields.neutral <= set(NEUTRAL)


@pytest.fixture(scope="module")
def server(backend: EngineBackend) -> Iterator[Server]:
    served = Server(backend)
    yield served
    served.stop()


@pytest.fixture()
def client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)


def test_chat_completions_take_the_sdks_fields_and_llama_cpps(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(
        model="x",
        messages=QUESTION,  # type: ignore[arg-type]
        max_completion_tokens=4,
        store=True,
        prompt_cache_key="session-1",
        prompt_cache_retention="24h",
        service_tier="auto",
        safety_identifier="user-hash",
        modalities=["text"],
        verbosity="low",
        metadata={"team": "a"},
        user="u",
        parallel_tool_calls=True,
        prediction={"type": "content", "content": "Paris"},
        web_search_options={},
        audio={"voice": "alloy", "format": "wav"},
        frequency_penalty=0,
        presence_penalty=0,
        n=1,
        logprobs=False,
        extra_body={"top_k": 40, "min_p": 0.05, "repeat_penalty": 1.1, "repeat_last_n": 32, "cache_prompt": True}
        | {"samplers": ["top_k", "min_p"], "typical_p": 1, "mirostat": 0, "n_probs": 0, "seed": -1},
    )
    assert reply.choices[0].message.content


def test_a_codex_shaped_responses_request_is_answered(server: Server) -> None:
    body = {
        "model": "gpt-5-codex",
        "instructions": "You are a coding agent.",
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Say hi."}]}],
        "parallel_tool_calls": False,  # its tools: test_unserved_tools.py (this model's template has none)
        "reasoning": {"effort": "low", "summary": "auto"},
        "store": False,
        "stream": False,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "0199a213-81c0-7800-8aa1-bbab2a035a53",
        "client_metadata": {"originator": "codex_exec"},
        "text": {"verbosity": "low"},
        "max_output_tokens": 4,
        "temperature": 0,
    }
    reply = httpx.post(f"{server.url}/responses", json=body, timeout=120)
    assert reply.status_code == 200, reply.text
    assert reply.json()["status"] in ("completed", "incomplete")


def test_anthropics_platform_fields_are_ignored(server: Server) -> None:
    claude = anthropic.Anthropic(base_url=server.base, api_key="none", max_retries=0, timeout=120)
    reply = claude.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=4,
        messages=QUESTION,  # type: ignore[arg-type]
        metadata={"user_id": "u"},
        service_tier="auto",
        extra_body={"mcp_servers": [{"type": "url", "url": "https://example.invalid", "name": "x"}]}
        | {"fallbacks": [], "speed": "standard", "inference_geo": "us", "min_p": 0.05, "cache_prompt": True},
    )
    assert reply.content[0].type == "text"


def test_top_k_one_is_greedy_on_every_chat_endpoint(server: Server, client: openai.OpenAI) -> None:
    """top_k is used, not only accepted: with one candidate a hot temperature changes nothing."""
    hot = {"temperature": 1.5, "top_k": 1, "max_tokens": 12}
    greedy = {"temperature": 0, "max_tokens": 12}

    def chat(sampling: dict[str, Any]) -> str:
        reply = httpx.post(f"{server.url}/chat/completions", json={"messages": QUESTION, **sampling}, timeout=120)
        return str(reply.json()["choices"][0]["message"]["content"])

    def messages(sampling: dict[str, Any]) -> str:
        reply = httpx.post(f"{server.url}/messages", json={"messages": QUESTION, **sampling}, timeout=120)
        return str(reply.json()["content"][0]["text"])

    def responses(sampling: dict[str, Any]) -> str:
        body = {"input": QUESTION, "max_output_tokens": sampling.pop("max_tokens"), **sampling}
        return str(
            httpx.post(f"{server.url}/responses", json=body, timeout=120).json()["output"][0]["content"][0]["text"]
        )

    for ask in (chat, messages, responses):
        assert ask(dict(hot)) == ask(dict(greedy)), ask.__name__


def test_docs_api_md_lists_every_field_each_endpoint_takes() -> None:
    """docs/api.md is tested against the declaration: each field's name appears there, quoted."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text(encoding="utf-8")
    for endpoint, fields in ENDPOINTS.items():
        missing = sorted(name for name in fields.known if f"`{name}`" not in text)
        assert not missing, (endpoint, missing)
