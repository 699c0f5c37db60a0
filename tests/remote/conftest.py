"""Two real workers per module (the tests that kill one start their own)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.remote.workers import RunningWorker, start_worker


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[RunningWorker]]:
    directory = tmp_path_factory.mktemp("workers")
    workers = [start_worker(directory), start_worker(directory)]
    yield workers
    for worker in workers:
        worker.kill()
