"""The context really served: a model trained for 4,096 tokens (the factory's) asked for 32,768
serves 4,096 (llama.cpp serves no more), and says so: ``specchat serve`` at start-up, ``/v1/models``
(``context_length``, llama-server's ``meta.n_ctx`` and ``meta.n_ctx_train``), and a prompt too long
for it gets a 400 that does not send the user to raise ``--ctx`` past what the model serves."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import pytest

from desktop_app.engine.api import ModelOptions
from tests.model_factory import CONTEXT
from tests.server.conftest import serving
from tests.server.live_server import Server, free_port

ASKED = 32768
LONG = "word " * 6000  # more than the 4,096 tokens the model serves


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.target, ModelOptions(n_ctx=ASKED)) as served:
        yield served


def test_models_give_the_context_served_and_the_one_trained_for(server: Server) -> None:
    (card,) = httpx.get(f"{server.url}/models", timeout=30).json()["data"]
    assert card["context_length"] == CONTEXT
    assert card["meta"] == {"n_ctx": CONTEXT, "n_ctx_train": CONTEXT}


def test_a_prompt_too_long_is_not_told_to_raise_the_context_past_the_model(server: Server) -> None:
    chat = httpx.post(
        f"{server.url}/chat/completions", json={"messages": [{"role": "user", "content": LONG}]}, timeout=120
    )
    claude = httpx.post(
        f"{server.url}/messages", json={"max_tokens": 4, "messages": [{"role": "user", "content": LONG}]}, timeout=120
    )
    for reply, message in ((chat, chat.json()["error"]["message"]), (claude, claude.json()["error"]["message"])):
        assert reply.status_code == 400, reply.text
        assert f"the context holds {CONTEXT:,}" in message, message
        assert f"the {CONTEXT:,} tokens the model was trained for" in message, message
        assert "--ctx" not in message and "raise the context" not in message, message
    assert chat.json()["error"]["code"] == "context_length_exceeded"


def test_serve_says_the_context_it_serves_at_start_up(models: Any) -> None:
    port = free_port()
    command = [sys.executable, "-m", "desktop_app", "serve", "--target", str(models.target), "--spec", "off"]
    process = subprocess.Popen([*command, "--ctx", str(ASKED), "--port", str(port)], stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 120
        assert process.stderr is not None
        while time.monotonic() < deadline and not any(" at http://" in line for line in lines):
            line = process.stderr.readline()
            if not line:
                break
            lines.append(line.strip())
    finally:
        process.terminate()
        process.wait(timeout=30)
    expected = f"specchat: serving {CONTEXT:,} tokens of context: the model was trained for {CONTEXT:,}; --ctx {ASKED} is above that"
    assert expected in lines, lines
