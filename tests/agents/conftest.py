"""`make agents-test`: the real coding agents (tests/agents/install.sh puts them, pinned, in a
cache) against a real `specchat serve` on a tools model with a 32k context (agent_model.py), each
behind a logging proxy (proxy.py). Not collected by `make test` (tests/conftest.py leaves this
folder out unless SPECCHAT_AGENTS_TEST=1, which the make target sets)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.agents.agent_model import CONTEXT, build_agent_model
from tests.agents.proxy import LoggingProxy
from tests.server.live_server import free_port

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Served:
    base: str  # http://127.0.0.1:PORT
    log: Path  # what `specchat serve` printed


CACHE = Path(os.environ.get("SPECCHAT_AGENTS_CACHE", Path.home() / ".cache/specchat/agents"))


@pytest.fixture(scope="session")
def agents_cache() -> Path:
    if not (CACHE / "claude-code").exists():
        subprocess.run([str(Path(__file__).with_name("install.sh"))], check=True)
    return CACHE


@pytest.fixture(scope="session")
def specchat_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`specchat serve --ctx 32768` on the agents' model, as a user starts it."""
    model = build_agent_model(tmp_path_factory.mktemp("agent-model"))
    port = free_port()
    log = tmp_path_factory.mktemp("serve-log") / "serve.log"
    env = dict(os.environ, SPECCHAT_HOME=str(tmp_path_factory.mktemp("serve-home")))
    cmd = [
        str(Path(sys.executable).with_name("specchat")),
        "serve",
        "--target",
        str(model),
        "--ctx",
        str(CONTEXT),
        "--port",
        str(port),
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while True:
        try:
            if httpx.get(f"{base}/v1/models", timeout=5).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert process.poll() is None and time.time() < deadline, log.read_text()
        time.sleep(0.5)
    yield Served(base, log)
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
    print(f"\nspecchat serve's log ({log}):\n" + log.read_text()[-4000:])


@pytest.fixture
def proxy(specchat_serve: Served) -> Iterator[LoggingProxy]:
    """A logging proxy in front of the server; after the test, the server must have logged no
    traceback while the agent ran."""
    logged = specchat_serve.log.stat().st_size
    served = LoggingProxy(specchat_serve.base)
    yield served
    served.stop()
    with specchat_serve.log.open("rb") as log:
        log.seek(logged)
        text = log.read().decode(errors="replace")
    assert "Traceback" not in text, text
