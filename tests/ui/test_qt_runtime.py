"""The Qt binding itself must survive a long chat: every token is a signal emit."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    token = Signal(str, bool)


def test_emitting_many_bool_signals_keeps_python_refcounts_intact(qtbot: object) -> None:
    # PySide6 6.12.0 on Python 3.11 dropped one reference to True per emit, so the app
    # aborted ("bool_dealloc") after a few thousand streamed tokens; pyproject excludes it.
    emitter = _Emitter()
    seen: list[bool] = []
    emitter.token.connect(lambda _text, flag: seen.append(flag))
    before = sys.getrefcount(True)
    for _ in range(3000):
        emitter.token.emit("x", True)
    seen.clear()
    assert abs(sys.getrefcount(True) - before) < 50
