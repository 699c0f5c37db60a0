"""Schemas become grammars in a worker process, within a time and a memory budget.

A schema is prepared within bounds before it is converted
(:mod:`~desktop_app.server.schema_prep`), but the converter is not ours: whatever a schema makes
it do, it does in a process of its own (``multiprocessing`` spawn, as the window's engine), one
job at a time, with at most :data:`TIME_BUDGET_S` seconds and :data:`MEMORY_BUDGET` bytes more
than the process needs to start. A job past either is refused (:class:`SchemaRefused`), the
process is killed and a new one starts for the next job; the server's event loop, the engine and
the window never wait on a conversion longer than the budget. Results (refusals too) are kept
for the schemas seen last, so an agent that sends the same tools with every request pays once.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from multiprocessing import get_context
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from desktop_app.server.schema_prep import SchemaRefused

TIME_BUDGET_S = 2.0
MEMORY_BUDGET = 512 * 2**20
START_TIMEOUT_S = 60.0  # a cold start on a busy machine (not counted in the job's budget)
KEPT = 256  # results kept

Job = Callable[..., str]


def _limit_memory(extra: int) -> None:
    try:
        import resource

        import psutil
    except ImportError:  # Windows has no rlimit: the time budget still holds
        return
    limit = psutil.Process().memory_info().vms + extra
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _serve(conn: Connection, memory: int) -> None:
    """The worker's loop: jobs in, ("ok", grammar) or ("refused", why) out, until the pipe closes."""
    from desktop_app.engine import ensure_backend

    ensure_backend()  # llama.cpp parses each grammar here first; loaded before the memory limit
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)  # llama.cpp prints a refused grammar whole on stderr: not in the server's log
    _limit_memory(memory)
    conn.send(("ready", ""))
    while True:
        try:
            job, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply = ("ok", job(*args))
        except SchemaRefused as exc:
            reply = ("refused", str(exc))
        except MemoryError:
            reply = ("refused", f"converting the schema needs more than {memory // 2**20} MB")
        except RecursionError:
            reply = ("refused", "the schema is nested too deep")
        except Exception as exc:  # noqa: BLE001 - the worker answers every job
            reply = ("refused", f"the JSON schema is not supported ({type(exc).__name__})")
        conn.send(reply)


class GrammarWorker:
    """Runs jobs (module-level functions of picklable arguments that return a grammar) in the
    worker process; :meth:`run` gives the grammar or raises SchemaRefused."""

    def __init__(self, time_budget_s: float = TIME_BUDGET_S, memory: int = MEMORY_BUDGET) -> None:
        self.time_budget_s = time_budget_s
        self.memory = memory
        self._lock = threading.Lock()
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None
        self._kept: OrderedDict[str, tuple[str, str]] = OrderedDict()

    def run(self, job: Job, *args: Any) -> str:
        key = f"{job.__module__}.{job.__qualname__}:{json.dumps(args, sort_keys=True, default=str)}"
        with self._lock:
            result = self._kept.get(key)
            if result is None:
                result = self._run(job, args)
                self._kept[key] = result
                while len(self._kept) > KEPT:
                    self._kept.popitem(last=False)
            self._kept.move_to_end(key)
            if result[0] == "failed":  # the worker did not start: the next request tries again
                del self._kept[key]
        kind, value = result
        if kind != "ok":
            raise SchemaRefused(value)
        return value

    def _run(self, job: Job, args: tuple[Any, ...]) -> tuple[str, str]:
        try:
            conn = self._started()
        except (OSError, EOFError, RuntimeError) as exc:
            self.close()
            return "failed", f"the grammar worker cannot start ({type(exc).__name__}: {exc})"
        try:
            conn.send((job, args))
            if not conn.poll(self.time_budget_s):
                self.close()
                return "refused", f"converting the schema takes more than {self.time_budget_s:g} s"
            kind, value = conn.recv()
        except (EOFError, OSError):  # the worker died: past its memory, or worse
            self.close()
            return "refused", f"converting the schema needs more than {self.memory // 2**20} MB"
        return str(kind), str(value)

    def _started(self) -> Connection:
        if self._conn is not None and self._process is not None and self._process.is_alive():
            return self._conn
        self.close()
        ctx = get_context("spawn")
        parent, child = ctx.Pipe()
        process = ctx.Process(target=_serve, args=(child, self.memory), name="specchat-grammar", daemon=True)
        process.start()
        child.close()
        self._process, self._conn = process, parent
        if not parent.poll(START_TIMEOUT_S):
            raise RuntimeError(f"no answer in {START_TIMEOUT_S:g} s")
        parent.recv()
        return parent

    def close(self) -> None:
        """Stop the worker process (a later job starts a new one)."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if conn is not None:
            conn.close()
        if process is not None:
            process.kill()
            process.join(timeout=5)


_WORKER = GrammarWorker()


def budgeted(job: Job, *args: Any) -> str:
    """``job(*args)`` in the shared worker, within its budget; SchemaRefused saying why not."""
    return _WORKER.run(job, *args)
