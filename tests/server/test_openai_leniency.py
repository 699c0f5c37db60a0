"""Lenient where OpenAI's clients are: a history rebuilt from the SDK's own objects, ``null``
fields, the ``developer`` role, any case of ``Bearer``, no ``max_tokens``; plus the endpoints
clients probe (``/health``, ``/v1/models/{id}``, the context length). Real server, real engine,
the official ``openai`` client where a client is what sends it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import openai
import pytest

from desktop_app.engine.api import ModelOptions
from desktop_app.engine_process.protocol import AutoPlan, Load
from desktop_app.server.engine_backend import EngineBackend
from tests.server.live_server import Server, engine_backend

KEY = "lenient-key"
SMALL_CTX = 768  # past the old 512-token default answer (a multiple of 256, as llama.cpp rounds)


@pytest.fixture(scope="module")
def small_backend(models: Any) -> Iterator[EngineBackend]:
    load = Load(str(models.target), ModelOptions(n_ctx=SMALL_CTX), plan=AutoPlan(measure=False))
    with engine_backend(load) as backend:
        yield backend


@pytest.fixture(scope="module")
def server(small_backend: EngineBackend) -> Iterator[Server]:
    served = Server(small_backend, KEY)
    yield served
    served.stop()


@pytest.fixture()
def client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key=KEY, max_retries=0, timeout=120)


def _post(server: Server, body: dict[str, Any], auth: str = f"Bearer {KEY}") -> httpx.Response:
    return httpx.post(f"{server.url}/chat/completions", json=body, headers={"Authorization": auth}, timeout=120)


def test_a_history_rebuilt_from_the_sdks_own_message_objects_is_accepted(client: openai.OpenAI) -> None:
    messages: list[Any] = [{"role": "user", "content": "Name a colour."}]
    first = client.chat.completions.create(model="x", messages=messages, max_tokens=4, temperature=0)
    echoed = first.choices[0].message.model_dump()  # refusal, tool_calls, annotations, audio... all None
    assert {"refusal", "tool_calls", "annotations", "audio"} <= set(echoed)
    messages += [echoed, {"role": "user", "content": "Another one."}]
    second = client.chat.completions.create(model="x", messages=messages, max_tokens=4, temperature=0, logprobs=None)
    assert second.choices[0].message.content is not None


def test_null_means_absent_and_unsupported_values_are_refused_by_name(server: Server) -> None:
    hi = [{"role": "user", "content": "Hi", "name": None, "refusal": None}]
    nulls = {"logprobs": None, "top_logprobs": None, "logit_bias": None, "stop": None, "seed": None, "user": None}
    ok = _post(server, {"messages": hi, "max_tokens": 2, **nulls})
    assert ok.status_code == 200, ok.text
    neutral = _post(server, {"messages": hi, "max_tokens": 2, "logprobs": False, "logit_bias": {}})
    assert neutral.status_code == 200, neutral.text
    refused = _post(server, {"messages": hi, "max_tokens": 2, "logprobs": True})
    assert refused.status_code == 400
    assert refused.json()["error"]["param"] == "logprobs"
    assert "not supported" in refused.json()["error"]["message"]


def test_developer_is_a_system_message_and_unknown_roles_are_named(server: Server) -> None:
    def ask(role: str) -> httpx.Response:
        messages = [{"role": role, "content": "Answer in French."}, {"role": "user", "content": "Hello"}]
        return _post(server, {"messages": messages, "max_tokens": 6, "temperature": 0})

    as_system, as_developer = ask("system").json(), ask("developer").json()
    assert as_developer["usage"] == as_system["usage"]
    assert as_developer["choices"][0]["message"] == as_system["choices"][0]["message"]
    wizard = ask("wizard")
    assert wizard.status_code == 400 and '"wizard"' in wizard.json()["error"]["message"]


def test_without_max_tokens_the_answer_runs_until_the_model_stops_or_the_context_is_full(server: Server) -> None:
    body = {"messages": [{"role": "user", "content": "Write a very long story about the sea."}], "temperature": 0}
    answer = _post(server, body).json()
    used = answer["usage"]["total_tokens"]
    stopped = answer["choices"][0]["finish_reason"]
    # The old default cut every answer at 512 tokens; now only the model or the context ends it.
    assert stopped == "stop" or (stopped == "length" and used >= SMALL_CTX - 1), answer["usage"]


def test_bearer_is_read_in_any_case(server: Server) -> None:
    hi = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2}
    for scheme in ("bearer", "BEARER", "Bearer"):
        assert _post(server, hi, f"{scheme} {KEY}").status_code == 200, scheme
    assert _post(server, hi, f"Basic {KEY}").status_code == 401


def test_health_and_models_give_the_context_length(server: Server, small_backend: EngineBackend) -> None:
    assert httpx.get(server.url.removesuffix("/v1") + "/health").json() == {"status": "ok"}
    headers = {"Authorization": f"Bearer {KEY}"}
    listed = httpx.get(f"{server.url}/models", headers=headers).json()["data"]
    assert [m["context_length"] for m in listed] == [SMALL_CTX]
    name = listed[0]["id"]
    one = httpx.get(f"{server.url}/models/{name}", headers=headers)
    assert one.status_code == 200 and one.json()["id"] == name and one.json()["meta"]["n_ctx"] == SMALL_CTX
    missing = httpx.get(f"{server.url}/models/no-such-model", headers=headers)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "model_not_found"
    models = small_backend.engine.models
    assert models is not None and models.target.n_ctx == SMALL_CTX
