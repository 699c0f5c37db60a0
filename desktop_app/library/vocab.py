"""Vocabulary checks in a child process of their own, so llama.cpp never runs in the window's.

The checks themselves are the engine's (:func:`desktop_app.engine.check_pairs`: vocabulary-only
loads, a fraction of a second each). Each call here starts a short-lived ``multiprocessing``
spawn child, which reports the file (or pair) it is about to touch before it does; if llama.cpp
crashes on a file, or stops answering, the child dies alone and the caller gets a verdict that
says so ("checking broken.gguf crashed the checker: killed by SIGSEGV") while the other pairs
are checked again in a new child. This process never imports llama.cpp.
"""

from __future__ import annotations

import importlib
import signal
from collections.abc import Sequence
from multiprocessing import get_context
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_app.engine import DraftCompatibility
from desktop_app.library.errors import CheckerCrashed

if TYPE_CHECKING:
    from desktop_app.engine import DraftingSupport, PairCheck

STEP_TIMEOUT_S = 120.0  # the child's start (a cold one, on a busy machine) or one file's load
JOB_PAIRS = "desktop_app.engine:check_pairs"
JOB_PAIR = "desktop_app.engine:check_pair"

Step = tuple[int, ...]  # (file,) before a file is loaded, (target, draft) before a pair is compared


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


def _exit_reason(code: int | None) -> str:
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


def in_child(job: str, *args: Any, stepped: bool = False) -> Any:
    """``job`` ("module:function") called with ``args`` in a new spawn child; its result, or the
    exception it raised. Raises :class:`ChildDied` when the child dies or stops answering."""
    ctx = get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    process: BaseProcess = ctx.Process(
        target=_child, args=(send, job, args, stepped), name="specchat-vocab-check", daemon=True
    )
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
                raise ChildDied(step, _exit_reason(process.exitcode)) from None
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


def _crash_message(paths: Sequence[Path], step: Step, reason: str) -> str:
    return f"checking {' with '.join(paths[i].name for i in step)} crashed the checker: {reason}"


def checked_pairs(paths: Sequence[Path], pairs: Sequence[tuple[int, int]], job: str | None = None) -> list[PairCheck]:
    """:func:`desktop_app.engine.check_pairs` (or ``job``, with its signature) in a child
    process, the same verdicts. A file (or pair) that crashes the child gets a verdict saying so,
    and the rest are checked again in a new child."""
    crashed: dict[Step, str] = {}  # (file,) or (target, draft), by indexes into paths
    while True:
        live = sorted({i for pair in pairs for i in pair if (i,) not in crashed})
        where = {old: new for new, old in enumerate(live)}
        todo = [p for p in pairs if p[0] in where and p[1] in where and p not in crashed]
        try:
            files, indexes = [str(paths[i]) for i in live], [(where[t], where[d]) for t, d in todo]
            done = in_child(job or JOB_PAIRS, files, indexes, stepped=True) if todo else []
        except ChildDied as crash:
            if crash.step is None:
                raise CheckerCrashed(f"the vocabulary checker crashed before its first file: {crash.reason}") from None
            step = tuple(live[i] for i in crash.step)
            crashed[step] = _crash_message(paths, step, crash.reason)
            continue
        results: dict[tuple[int, int], PairCheck] = dict(zip(todo, done))
        return [results.get(pair) or _crashed_verdict(crashed, pair) for pair in pairs]


def _crashed_verdict(crashed: dict[Step, str], pair: tuple[int, int]) -> PairCheck:
    target, draft = pair
    message = crashed.get(pair) or crashed.get((target,)) or crashed[(draft,)]
    return DraftCompatibility([message]), None


def check_pair(target: str | Path, draft: str | Path) -> tuple[DraftCompatibility, DraftingSupport]:
    """Whether ``draft`` shares ``target``'s vocabulary, and which drafting the pair supports
    (:func:`desktop_app.engine.check_pair`, in a child process): ModelLoadError when a file
    cannot be read, CheckerCrashed when it crashes llama.cpp."""
    try:
        result: tuple[DraftCompatibility, DraftingSupport] = in_child(JOB_PAIR, str(target), str(draft))
    except ChildDied as crash:
        raise CheckerCrashed(
            f"checking {Path(target).name} with {Path(draft).name} crashed the checker: {crash.reason}"
        ) from None
    return result


def __getattr__(name: str) -> Any:
    # lab/peer_api.py still reads VocabOnlyModel here, where it was: it is the engine's now
    # (desktop_app.engine.VocabOnlyModel, which lab should import), loaded only when asked for.
    if name == "VocabOnlyModel":
        import desktop_app.engine

        return desktop_app.engine.VocabOnlyModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
