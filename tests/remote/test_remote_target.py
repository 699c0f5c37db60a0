"""A factory target spread over this computer and two real `specchat worker` processes."""

from __future__ import annotations

import http.server
import socketserver
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from desktop_app.engine import Engine
from desktop_app.engine.api import LayerSplit, ModelOptions, WorkerAddress
from desktop_app.engine.errors import WorkerError
from desktop_app.engine.llama import rpc
from tests.helpers import run, user
from tests.remote.workers import RunningWorker, free_port

PROMPT = user("Write a list of ten animals and what each one eats.")


def test_this_build_has_the_rpc_backend() -> None:
    assert rpc.supported(), rpc.NOT_BUILT


@pytest.fixture(scope="module")
def engines(models: Any, two_workers: list[RunningWorker]) -> Iterator[tuple[Engine, Engine]]:
    local, remote = Engine(), Engine()
    local.load_target(models.target, ModelOptions(n_ctx=512, n_threads=1))
    local.load_draft(models.draft, ModelOptions(n_ctx=512, n_threads=1))
    workers = tuple(w.address for w in two_workers)
    remote.load_target(models.target, ModelOptions(n_ctx=512, n_threads=1, workers=workers))
    remote.load_draft(models.draft, ModelOptions(n_ctx=512, n_threads=1))
    yield local, remote
    local.close()
    remote.close()


def test_the_layers_are_spread_over_this_computer_and_both_workers(
    engines: tuple[Engine, Engine], two_workers: list[RunningWorker]
) -> None:
    _, remote = engines
    info = remote.loaded().target
    a, b = (str(w.address) for w in two_workers)
    assert info.placement == f"this computer: 2 layers, {a}: 2 layers, {b}: 2 layers"
    assert [line.split(":")[0] for line in info.remote_devices] == [
        f"RPC0 on {w.address.host}" for w in two_workers
    ] or all(str(w.address) in line for w, line in zip(two_workers, info.remote_devices))
    for worker in two_workers:
        assert "Accepted client connection" in worker.output()


@pytest.mark.parametrize(("spec", "drafter"), [("off", None), ("on", "model"), ("auto", "model")])
def test_greedy_answers_are_token_identical_to_the_local_target(
    engines: tuple[Engine, Engine], spec: str, drafter: str | None
) -> None:
    local, remote = engines
    kwargs: dict[str, Any] = dict(messages=PROMPT, max_tokens=48, spec=spec, draft_max=4, drafter=drafter)
    here, _ = run(local, **kwargs)
    there, _ = run(remote, **kwargs)
    assert there.token_ids == here.token_ids
    assert there.stats.generated_tokens == 48
    if spec == "on":
        assert there.stats.drafter == drafter
        assert there.stats.drafted > 0 and there.stats.accepted > 0


def test_prompt_lookup_over_workers_answers_as_locally(default_model: Any, two_workers: list[RunningWorker]) -> None:
    """The embedded model (its answers copy from a rewrite prompt, so prompt lookup drafts)."""
    from tests.engine.test_lossless import REWRITE_PROMPTS

    workers = tuple(w.address for w in two_workers)
    results = []
    for options in (ModelOptions(n_ctx=1024), ModelOptions(n_ctx=1024, workers=workers, split=LayerSplit((1, 2, 2)))):
        engine = Engine()
        try:
            engine.load_target(default_model, options)
            for spec in ("off", "on"):
                result, _ = run(engine, messages=user(REWRITE_PROMPTS[0]), max_tokens=40, spec=spec, drafter="ngram")
                results.append(result)
        finally:
            engine.close()
    local_off, local_on, remote_off, remote_on = results
    assert remote_off.token_ids == local_off.token_ids == remote_on.token_ids == local_on.token_ids
    assert remote_on.stats.drafter == "ngram" and remote_on.stats.accepted > 0


def test_an_uneven_split_puts_the_layers_where_asked(models: Any, two_workers: list[RunningWorker]) -> None:
    engine = Engine()
    try:
        workers = tuple(w.address for w in two_workers)
        info = engine.load_target(
            models.target, ModelOptions(n_ctx=256, n_threads=1, workers=workers, split=LayerSplit((0, 1, 2)))
        )
        a, b = (str(w.address) for w in two_workers)
        assert info.placement == f"this computer: 0 layers, {a}: 2 layers, {b}: 4 layers"
        result, _ = run(engine, messages=PROMPT, max_tokens=8, spec="off")
        assert result.stats.generated_tokens == 8
    finally:
        engine.close()


def test_a_worker_that_is_not_running_is_a_clear_error(models: Any) -> None:
    missing = WorkerAddress("127.0.0.1", free_port())
    engine = Engine()
    with pytest.raises(WorkerError, match=f"cannot reach worker {missing}: nothing listens there"):
        engine.load_target(models.target, ModelOptions(n_ctx=256, workers=(missing,)))
    engine.load_target(models.target, ModelOptions(n_ctx=256, n_threads=1))  # and it still loads locally
    result, _ = run(engine, messages=PROMPT, max_tokens=4)
    assert result.stats.generated_tokens == 4
    engine.close()


class _Banner(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")


@pytest.mark.parametrize("server", ["banner", "http"])
def test_a_port_that_is_not_a_worker_is_a_clear_error(models: Any, server: str) -> None:
    """Another program on the port: one that talks first (an SSH server), one that waits for a
    line (an HTTP server, e.g. the local API's port typed by mistake)."""
    handler = _Banner if server == "banner" else http.server.BaseHTTPRequestHandler
    other_server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    other_server.daemon_threads = True
    threading.Thread(target=other_server.serve_forever, daemon=True).start()
    expected = (
        "is not a specchat worker" if server == "banner" else "did not answer the handshake.*not a specchat worker"
    )
    try:
        other = WorkerAddress("127.0.0.1", other_server.server_address[1])
        with pytest.raises(WorkerError, match=expected):
            Engine().load_target(models.target, ModelOptions(n_ctx=256, workers=(other,)))
    finally:
        other_server.shutdown()
        other_server.server_close()


def test_a_split_that_does_not_fit_the_workers_is_refused() -> None:
    with pytest.raises(ValueError, match="split has 2 weights but there are 2 workers"):
        ModelOptions(workers=(WorkerAddress("a"), WorkerAddress("b")), split=LayerSplit((1, 1)))
