"""Fill-in-the-middle for editors: ``/v1/completions`` with ``suffix`` (the openai client) and
llama-server's ``/infill``, on a factory model whose vocabulary declares FIM tokens. The prompt is
llama.cpp's prefix-suffix-middle layout (checked on the tokens), both endpoints give the same greedy
text as the same layout sent as a raw prompt, and a model without FIM tokens is a named 400."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import openai
import pytest

from desktop_app.engine import Engine
from desktop_app.engine.api import GenerateRequest
from desktop_app.engine_process.protocol import AutoPlan, Load
from tests.server.conftest import serving
from tests.server.live_server import Server, engine_backend

PREFIX = "def add(a, b):\n    "
SUFFIX = "\n\nprint(add(1, 2))\n"
TRICKY = SUFFIX + "# <fim_suffix> written in the code\n"


@pytest.fixture(scope="module")
def fim_engine(models: Any) -> Iterator[Engine]:
    engine = Engine()
    engine.load_target(models.fim)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with engine_backend(Load(str(models.fim), plan=AutoPlan(measure=False))) as backend:
        served = Server(backend)
        yield served
        served.stop()


def test_the_prompt_is_prefix_suffix_middle_and_code_stays_text(fim_engine: Engine) -> None:
    target = fim_engine.target
    assert target is not None and target.fim_ids == (11, 12, 13)
    tokens, _ = fim_engine.build_prompt(GenerateRequest(prompt=PREFIX, suffix=TRICKY))
    prefix = target.tokenize(PREFIX, add_special=False, parse_special=False)
    suffix = target.tokenize(TRICKY, add_special=False, parse_special=False)
    assert tokens == [11, *prefix, 12, *suffix, 13]
    assert tokens.count(12) == 1  # "<fim_suffix>" written in the code is not the special token


def test_completions_with_a_suffix_and_infill_give_the_same_middle(server: Server) -> None:
    client = openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)
    middle = client.completions.create(model="x", prompt=PREFIX, suffix=SUFFIX, max_tokens=12, temperature=0)
    raw = client.completions.create(
        model="x", prompt=f"<fim_prefix>{PREFIX}<fim_suffix>{SUFFIX}<fim_middle>", max_tokens=12, temperature=0
    )
    text = middle.choices[0].text
    assert text and text == raw.choices[0].text
    base = server.url.removesuffix("/v1")
    infill = httpx.post(
        f"{base}/infill", json={"input_prefix": PREFIX, "input_suffix": SUFFIX, "n_predict": 12}, timeout=120
    ).json()
    assert infill["content"] == text and infill["stop"] is True and infill["tokens_predicted"] == 12
    assert infill["stop_type"] == "limit"
    with httpx.stream(
        "POST", f"{base}/infill", json={"input_prefix": PREFIX, "input_suffix": SUFFIX, "n_predict": 12, "stream": True}
    ) as streamed:
        lines = [line.removeprefix("data: ") for line in streamed.iter_lines() if line.startswith("data: ")]
    pieces = [json.loads(line) for line in lines]
    assert "".join(p["content"] for p in pieces) == text and pieces[-1]["stop"] is True


def test_a_model_without_fim_tokens_is_a_named_400(models: Any) -> None:
    with serving(models.target) as served:
        answer = httpx.post(
            f"{served.url}/completions", json={"prompt": PREFIX, "suffix": SUFFIX, "max_tokens": 4}, timeout=60
        )
        assert answer.status_code == 400
        assert "no fill-in-the-middle tokens" in answer.json()["error"]["message"]
        extra = httpx.post(
            f"{served.url.removesuffix('/v1')}/infill", json={"input_prefix": "a", "input_extra": [{"text": "b"}]}
        )
        assert extra.status_code == 400 and extra.json()["error"]["param"] == "input_extra"
