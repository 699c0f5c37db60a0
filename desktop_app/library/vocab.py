"""Vocabulary checks in a child process of their own, so llama.cpp never runs in the window's.

The checks themselves are the engine's (:func:`desktop_app.engine.check_pairs`: vocabulary-only
loads, a fraction of a second each). Each call here starts a short-lived spawn child
(:func:`desktop_app.library.child.in_child`), which reports the file (or pair) it is about to
touch before it does; if llama.cpp crashes on a file, or stops answering, the child dies alone
and the caller gets a verdict that says so ("checking broken.gguf crashed the checker: killed
by SIGSEGV") while the other pairs are checked again in a new child. This process never imports
llama.cpp.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_app.engine import DraftCompatibility
from desktop_app.library.child import ChildDied, Step, in_child
from desktop_app.library.errors import CheckerCrashed

if TYPE_CHECKING:
    from desktop_app.engine import DraftingSupport, PairCheck

__all__ = ["ChildDied", "check_pair", "checked_pairs", "in_child"]

JOB_PAIRS = "desktop_app.engine:check_pairs"
JOB_PAIR = "desktop_app.engine:check_pair"
CHILD_NAME = "specchat-vocab-check"
# A step (child.Step) is (file,) before a file is loaded, (target, draft) before a pair is compared


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
            done = in_child(job or JOB_PAIRS, files, indexes, stepped=True, name=CHILD_NAME) if todo else []
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
        result: tuple[DraftCompatibility, DraftingSupport] = in_child(
            JOB_PAIR, str(target), str(draft), name=CHILD_NAME
        )
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
