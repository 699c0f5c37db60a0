"""Each coding agent, installed from its registry at a pinned version and configured exactly as
docs/clients.md says, answers a one-shot prompt through `specchat serve`: it exits 0 with an
answer, no request it sends gets a 4xx or 5xx, and none is sent twice (a client that thinks the
server has gone re-sends its whole request)."""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.agents.agent_model import CONTEXT
from tests.agents.proxy import LoggingProxy

pytestmark = pytest.mark.slow

PROMPT = "Reply with one word: hello. Do not use any tool."
KEY = "any-text"  # SpecChat runs without a key: the agents that insist on one send this
TIMEOUT_S = 900


def base_env(home: Path) -> dict[str, str]:
    """A clean HOME (each agent's settings live there) and nothing of the caller's keys."""
    keep = ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), NO_COLOR="1", CI="1")
    return env


def project(tmp_path: Path) -> Path:
    """A tiny git repository to work in (Codex and Aider look for one)."""
    work = tmp_path / "project"
    work.mkdir()
    (work / "hello.py").write_text('print("hello")\n')
    for cmd in (
        ["git", "init", "-q"],
        ["git", "add", "."],
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"],
    ):
        subprocess.run(cmd, cwd=work, check=True)
    return work


def run_agent(cmd: list[str], env: dict[str, str], cwd: Path, proxy: LoggingProxy) -> str:
    done = subprocess.run(
        cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL
    )
    dump = cwd.parent / "requests"  # every request and error answer, whole, for a failure's report
    proxy.dump(dump)
    report = (
        f"exit {done.returncode}\nstdout: {done.stdout[-3000:]}\nstderr: {done.stderr[-3000:]}\n"
        f"requests (whole in {dump}):\n{proxy.summary()}"
    )
    print(report)
    failed = [e.describe() for e in proxy.exchanges if e.status is None or not 200 <= e.status < 300]
    assert not failed, "requests answered with an error:\n" + "\n".join(failed) + "\n" + report
    posts = Counter(e.digest for e in proxy.exchanges if e.method == "POST")
    resent = [e.describe() for e in proxy.exchanges if posts[e.digest] > 1]
    assert not resent, "requests sent more than once:\n" + "\n".join(resent[:4]) + "\n" + report
    assert done.returncode == 0, report
    assert done.stdout.strip(), "no answer\n" + report
    assert any(e.method == "POST" for e in proxy.exchanges), "the agent never asked the model\n" + report
    return done.stdout


def test_claude_code(agents_cache: Path, proxy: LoggingProxy, tmp_path: Path) -> None:
    env = base_env(tmp_path / "home")
    env.update(
        ANTHROPIC_BASE_URL=proxy.base,
        ANTHROPIC_AUTH_TOKEN=KEY,
        ANTHROPIC_API_KEY="",
        ANTHROPIC_MODEL="specchat",
        ANTHROPIC_DEFAULT_HAIKU_MODEL="specchat",
        CLAUDE_CODE_ATTRIBUTION_HEADER="0",
        CLAUDE_CODE_MAX_CONTEXT_TOKENS=str(CONTEXT),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
    )
    claude = agents_cache / "claude-code/node_modules/.bin/claude"
    run_agent([str(claude), "-p", PROMPT], env, project(tmp_path), proxy)
    assert all(e.path.startswith("/v1/messages") for e in proxy.exchanges if e.method == "POST")


def test_codex(agents_cache: Path, proxy: LoggingProxy, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex/config.toml").write_text(
        'model = "specchat"\nmodel_provider = "specchat"\ncheck_for_update_on_startup = false\n\n'
        "[analytics]\nenabled = false\n\n"
        f'[model_providers.specchat]\nname = "SpecChat"\nbase_url = "{proxy.base}/v1"\n'
        'env_key = "SPECCHAT_API_KEY"\nwire_api = "responses"\n'
    )
    env = base_env(home)
    env.update(CODEX_HOME=str(home / ".codex"), SPECCHAT_API_KEY=KEY)
    codex = agents_cache / "codex/node_modules/.bin/codex"
    run_agent([str(codex), "exec", PROMPT], env, project(tmp_path), proxy)
    assert all(e.path.startswith("/v1/responses") for e in proxy.exchanges if e.method == "POST")


def test_qwen_code(agents_cache: Path, proxy: LoggingProxy, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".qwen").mkdir(parents=True)
    settings = {"security": {"auth": {"selectedType": "openai"}}, "privacy": {"usageStatisticsEnabled": False}}
    (home / ".qwen/settings.json").write_text(json.dumps(settings))
    env = base_env(home)
    env.update(OPENAI_BASE_URL=f"{proxy.base}/v1", OPENAI_API_KEY=KEY, OPENAI_MODEL="specchat")
    qwen = agents_cache / "qwen-code/node_modules/.bin/qwen"
    run_agent([str(qwen), "-p", PROMPT], env, project(tmp_path), proxy)


def test_continue_cli(agents_cache: Path, proxy: LoggingProxy, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".continue").mkdir(parents=True)
    config = home / ".continue/config.yaml"
    config.write_text(
        "name: SpecChat\nversion: 0.0.1\nschema: v1\nmodels:\n  - name: SpecChat\n    provider: openai\n"
        f"    model: specchat\n    apiBase: {proxy.base}/v1\n    apiKey: {KEY}\n"
        "    roles: [chat, edit, apply, autocomplete, embed]\n"
    )
    env = base_env(home)
    env.update(CONTINUE_CLI_ENABLE_TELEMETRY="0")
    cn = agents_cache / "continue-cli/node_modules/.bin/cn"
    run_agent([str(cn), "-p", PROMPT, "--config", str(config)], env, project(tmp_path), proxy)


def test_aider(agents_cache: Path, proxy: LoggingProxy, tmp_path: Path) -> None:
    env = base_env(tmp_path / "home")
    env.update(OPENAI_API_BASE=f"{proxy.base}/v1", OPENAI_API_KEY=KEY)
    aider = agents_cache / "aider/bin/aider"
    cmd = [
        str(aider),
        "--model",
        "openai/specchat",
        "--message",
        PROMPT,
        "--yes",
        "--no-show-model-warnings",
        "--no-check-update",
        "--analytics-disable",
        "--no-auto-commits",
    ]
    run_agent(cmd, env, project(tmp_path), proxy)
