"""``/v1/embeddings`` through the official ``openai`` client against the real server and engine:
vectors are llama.cpp's own pooled embeddings (checked against llama-cpp-python's ``Llama.embed``
on the same file), unit length, in order, in both encodings; bad inputs are named 400s."""

from __future__ import annotations

import base64
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import llama_cpp
import numpy as np
import openai
import pytest

from tests.server.conftest import serving
from tests.server.live_server import Server

TEXTS = ["The cat sat on the mat.", "A cat is sitting on a mat.", "Interest rates rose in March."]


@pytest.fixture(scope="module")
def server(default_model: Path) -> Iterator[Server]:
    with serving(default_model) as served:
        yield served


@pytest.fixture()
def client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)


def _cosine(a: Any, b: Any) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_vectors_are_llama_cpps_own_pooled_embeddings(client: openai.OpenAI, default_model: Path) -> None:
    answer = client.embeddings.create(model="x", input=TEXTS)  # the client asks for base64 by default
    vectors = [d.embedding for d in sorted(answer.data, key=lambda d: d.index)]
    assert [d.index for d in answer.data] == [0, 1, 2]
    assert all(math.isclose(float(np.linalg.norm(v)), 1.0, rel_tol=1e-4) for v in vectors)
    assert answer.usage.prompt_tokens > len(TEXTS)
    reference = llama_cpp.Llama(
        str(default_model), embedding=True, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN, verbose=False
    )
    try:
        assert all(len(v) == reference.n_embd() for v in vectors)  # the model's own dimension
        for text, vector in zip(TEXTS, vectors, strict=True):
            assert _cosine(vector, reference.embed(text, normalize=True)) > 0.999, text
    finally:
        reference.close()
    # identical inputs give identical vectors, in one request and across requests
    again = client.embeddings.create(model="x", input=[TEXTS[0], TEXTS[0]])
    assert again.data[0].embedding == again.data[1].embedding == vectors[0]
    # the two sentences about a cat are nearer each other than either is to the one about rates
    assert _cosine(vectors[0], vectors[1]) > max(_cosine(vectors[0], vectors[2]), _cosine(vectors[1], vectors[2]))


def test_float_and_base64_encodings_agree(server: Server) -> None:
    def ask(encoding: str) -> Any:
        return httpx.post(
            f"{server.url}/embeddings", json={"input": TEXTS[0], "encoding_format": encoding}, timeout=60
        ).json()

    as_floats = ask("float")["data"][0]["embedding"]
    decoded = np.frombuffer(base64.b64decode(ask("base64")["data"][0]["embedding"]), dtype="<f4")
    assert len(as_floats) == len(decoded) == 576  # SmolLM2-135M's width
    assert np.allclose(as_floats, decoded, atol=1e-6)


@pytest.mark.parametrize(
    ("body", "param", "words"),
    [
        ({"input": [[101, 2023]]}, "input", "token ids of another tokenizer"),
        ({"input": []}, "input", "non-empty"),
        ({"input": "hi", "encoding_format": "hex"}, "encoding_format", "'float' or 'base64'"),
        ({"input": "hi", "dimensions": 8}, "dimensions", "must be 576"),
        ({"input": "hi", "colour": "blue"}, "colour", "unknown field"),
        ({"input": "word " * 3000}, None, "at most 2,048"),
    ],
)
def test_bad_embedding_requests_are_named_400s(server: Server, body: Any, param: str | None, words: str) -> None:
    answer = httpx.post(f"{server.url}/embeddings", json=body, timeout=60)
    assert answer.status_code == 400, answer.text
    assert words in answer.json()["error"]["message"]
    assert answer.json()["error"]["param"] == param


def test_langchain_s_openai_embeddings_with_the_documented_setting(client: openai.OpenAI, server: Server) -> None:
    """docs/clients.md: LangChain's OpenAIEmbeddings sends tiktoken's token ids unless told not to
    (check_embedding_ctx_length=False; without it, it also downloads tiktoken's tables); with it,
    its vectors are the server's own."""
    from langchain_openai import OpenAIEmbeddings

    embeddings = OpenAIEmbeddings(
        base_url=server.url, api_key="none", model="specchat", check_embedding_ctx_length=False, max_retries=0
    )
    vectors = embeddings.embed_documents(TEXTS)
    direct = client.embeddings.create(model="specchat", input=TEXTS).data
    assert len(vectors) == len(TEXTS)
    for mine, theirs in zip(vectors, direct, strict=True):
        assert _cosine(mine, theirs.embedding) > 0.9999
