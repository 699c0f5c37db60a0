"""One job in a short-lived child process of its own, so llama.cpp never runs in the caller's.

The model library runs llama.cpp for a few things outside the engine's process: the vocabulary
checks (``vocab.py``) and the GPU memory figure (``fit.py``). Each goes through :func:`in_child`:
a new ``multiprocessing`` spawn child imports the job's module, runs it and sends back its result
or the exception it raised. If llama.cpp crashes there, or the child stops answering, the child
dies alone and the caller gets :class:`ChildDied`, with the reason ("killed by SIGSEGV") and the
last step the job reported, to say in its own words which file broke it.
"""

from __future__ import annotations

import importlib
import signal
from multiprocessing import get_context
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from desktop_app.library.errors import CheckerCrashed

STEP_TIMEOUT_S = 120.0  # the child's start (a cold one, on a busy machine) or one step of the job

Step = tuple[int, ...]  # what a stepped job says it is about to do, e.g. (file,) or (target, draft)


def _child(conn: Connection, job: str, args: tuple[Any, ...], stepped: bool) -> None:
    """The child's entry point: ``job(*args)`` with steps reported, then ("done", result) or
    ("error", the exception)."""
    module, name = job.split(":")
    function = getattr(importlib.import_module(module), name)
    kwargs = {"step": lambda step: conn.send(("step", step))} if stepped else {}
    try:
        reply: tuple[str, Any] = ("done", function(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - every failure goes back to the caller
        reply = ("error", exc)
    try:
        conn.send(reply)
    except Exception as exc:  # noqa: BLE001 - an exception that does not pickle: its text
        conn.send(("error", CheckerCrashed(f"{type(exc).__name__}: {exc}")))
    conn.close()


def exit_reason(code: int | None) -> str:
    """A child's exit code in words: ``killed by SIGSEGV``, ``it exited with code 3``."""
    if code is None:
        return "it did not exit"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"it exited with code {code}"


class ChildDied(Exception):
    """The child died (or hung) while on ``step``: None when before its first step."""

    def __init__(self, step: Step | None, reason: str) -> None:
        super().__init__(reason)
        self.step = step
        self.reason = reason


def in_child(job: str, *args: Any, stepped: bool = False, name: str = "specchat-library-child") -> Any:
    """``job`` ("module:function") called with ``args`` in a new spawn child named ``name``; its
    result, or the exception it raised. A ``stepped`` job gets a ``step`` keyword to report what
    it is about to do. Raises :class:`ChildDied` when the child dies or stops answering."""
    ctx = get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    process: BaseProcess = ctx.Process(target=_child, args=(send, job, args, stepped), name=name, daemon=True)
    process.start()
    send.close()
    step: Step | None = None
    try:
        while True:
            if not receive.poll(STEP_TIMEOUT_S):
                raise ChildDied(step, f"no answer in {STEP_TIMEOUT_S:g} s")
            try:
                kind, value = receive.recv()
            except (EOFError, OSError):
                process.join(timeout=5)
                raise ChildDied(step, exit_reason(process.exitcode)) from None
            if kind == "step":
                step = tuple(value)
            elif kind == "error":
                raise value
            else:
                return value
    finally:
        receive.close()
        if process.is_alive():
            process.join(timeout=5)
        if process.is_alive():
            process.kill()
            process.join(timeout=5)
