"""Limits for rendering untrusted chat templates: a time budget and a size budget.

Jinja's sandbox stops attribute escapes, not CPU or memory bombs
(``{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}`` runs
for hours). A template renders on the engine's own thread, in Python bytecode, so a watchdog
can stop it there: when the budget runs out it raises :class:`RenderTimeout` in the rendering
thread (``PyThreadState_SetAsyncExc``), which Jinja cannot catch (a BaseException). Sizes are
bounded where a template could allocate at once: repeated strings and lists (``"x" * 10**9``),
huge powers, and the text produced.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterable
from types import TracebackType
from typing import Any

from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

RENDER_BUDGET_S = 3.0  # real templates render in milliseconds, even for long conversations
MAX_RENDER_CHARS = 8_000_000  # far more than any context window holds
MAX_POWER_BITS = 4096


class RenderTimeout(BaseException):
    """Raised inside the rendering thread by the watchdog (not an Exception: templates cannot catch it)."""


class Watchdog:
    """``with Watchdog(seconds):`` raises RenderTimeout in this thread when the block runs too long."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._thread_id = threading.get_ident()
        self._lock = threading.Lock()
        self._active = False
        self._fired = False
        self._timer: threading.Timer | None = None

    def __enter__(self) -> Watchdog:
        self._thread_id = threading.get_ident()
        self._active = True
        self._timer = threading.Timer(self.seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def _fire(self) -> None:
        with self._lock:
            if self._active:
                self._fired = True
                _set_async_exc(self._thread_id, RenderTimeout)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._active = False
            if self._fired:
                _set_async_exc(self._thread_id, None)  # not delivered yet: withdraw it


def _set_async_exc(thread_id: int, exc: type[BaseException] | None) -> None:
    # No argtypes on purpose: None must reach C as NULL ("clear the pending exception").
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc is not None else None
    )


class LimitedEnvironment(ImmutableSandboxedEnvironment):
    """The immutable sandbox, with ``*`` and ``**`` checked before they allocate."""

    intercepted_binops = frozenset(["*", "**"])

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if (
                    isinstance(seq, (str, list, tuple))
                    and isinstance(times, int)
                    and len(seq) * times > MAX_RENDER_CHARS
                ):
                    raise SecurityError("the template tried to build a string or list too large to hold")
        if operator == "**" and isinstance(left, int) and isinstance(right, int):
            if right > 0 and abs(left) > 1 and right * max(abs(left).bit_length(), 1) > MAX_POWER_BITS:
                raise SecurityError("the template tried to compute a number too large to hold")
        return super().call_binop(context, operator, left, right)


def join_limited(pieces: Iterable[str]) -> str:
    """The rendered text, refusing output past :data:`MAX_RENDER_CHARS`."""
    out: list[str] = []
    size = 0
    for piece in pieces:
        size += len(piece)
        if size > MAX_RENDER_CHARS:
            raise SecurityError(f"the template produced more than {MAX_RENDER_CHARS:,} characters")
        out.append(piece)
    return "".join(out)
