"""The Qt binding itself must survive a long chat: every token is a signal emit.

PySide6 6.12.0 on Python 3.11 dropped one reference to ``True`` on every emit of a signal with a
``bool`` argument, so the app aborted (``bool_dealloc``) after a few thousand streamed tokens;
pyproject.toml excludes that release. The tests below check the installed release, and count
references of what the app sends through signals, on both paths it uses: a direct call in the
GUI thread and a queued one from a background thread (the engine client's reader). A binding
that drops or keeps one reference per emit moves a count by thousands.

``True``, ``False`` and ``None`` are immortal from Python 3.12 on (PEP 683): their count never
moves, and a dropped reference cannot free them. There the bug is harmless, their check is
skipped, and the fresh objects and strings still catch a binding that miscounts references.
"""

from __future__ import annotations

import gc
import sys
import threading
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QObject, Qt, Signal, Slot  # noqa: E402

EMITS = 3000
BROKEN_RELEASES = {"6.12.0"}  # pyproject.toml: PySide6-Essentials>=6.6,!=6.12.0
IMMORTAL_SINGLETONS = sys.version_info >= (3, 12)


class _Emitter(QObject):
    token = Signal(str, bool)  # the shape of a streamed piece: text, and a flag
    value = Signal(object)


class _Receiver(QObject):
    """Lives in the GUI thread; counts what arrives and keeps none of it."""

    def __init__(self) -> None:
        super().__init__()
        self.received = 0
        self.matched = 0
        self.expect_none = False  # the None test sends None on purpose

    @Slot(str, bool)
    def on_token(self, text: str, flag: bool) -> None:
        self.received += 1
        self.matched += flag is True and text.startswith("piece")

    @Slot(object)
    def on_value(self, value: object) -> None:
        self.received += 1
        self.matched += value is not None or self.expect_none


def _installed_pyside() -> str:
    for name in ("PySide6-Essentials", "PySide6"):
        try:
            return version(name)
        except PackageNotFoundError:
            continue
    import PySide6

    return PySide6.__version__


def test_the_release_that_drops_references_is_not_installed() -> None:
    import PySide6

    assert _installed_pyside() not in BROKEN_RELEASES
    assert PySide6.__version__ not in BROKEN_RELEASES


def _emit_many(qtbot: Any, queued: bool, emit: Any, receiver: _Receiver) -> None:
    """Call ``emit`` EMITS times, from a background thread when ``queued``; wait for delivery."""
    if queued:
        worker = threading.Thread(target=lambda: [emit() for _ in range(EMITS)])
        worker.start()
        worker.join(timeout=60)
        assert not worker.is_alive()
        qtbot.waitUntil(lambda: receiver.received == EMITS, timeout=30_000)
    else:
        for _ in range(EMITS):
            emit()
    assert receiver.received == receiver.matched == EMITS  # each one arrived, intact
    gc.collect()


def _connect(emitter: _Emitter, receiver: _Receiver, queued: bool) -> None:
    kind = Qt.ConnectionType.QueuedConnection if queued else Qt.ConnectionType.DirectConnection
    emitter.token.connect(receiver.on_token, kind)
    emitter.value.connect(receiver.on_value, kind)


@pytest.mark.parametrize("queued", [False, True], ids=["direct", "queued from a thread"])
def test_a_fresh_object_sent_thousands_of_times_keeps_its_reference_count(qtbot: Any, queued: bool) -> None:
    emitter, receiver = _Emitter(), _Receiver()
    _connect(emitter, receiver, queued)
    payload = object()  # mortal on every Python: its count is exact
    before = sys.getrefcount(payload)

    _emit_many(qtbot, queued, lambda: emitter.value.emit(payload), receiver)

    assert sys.getrefcount(payload) == before


@pytest.mark.parametrize("queued", [False, True], ids=["direct", "queued from a thread"])
def test_a_streamed_text_and_flag_keep_their_reference_counts(qtbot: Any, queued: bool) -> None:
    emitter, receiver = _Emitter(), _Receiver()
    _connect(emitter, receiver, queued)
    text = "".join(["piece", " of an answer"])  # built at run time: a mortal str, not an interned constant
    text_before = sys.getrefcount(text)
    true_before = sys.getrefcount(True)

    _emit_many(qtbot, queued, lambda: emitter.token.emit(text, True), receiver)

    assert sys.getrefcount(text) == text_before
    if not IMMORTAL_SINGLETONS:  # on 3.12+ True's count is fixed: nothing to see, nothing to free
        assert abs(sys.getrefcount(True) - true_before) < EMITS // 10


@pytest.mark.skipif(IMMORTAL_SINGLETONS, reason="None is immortal from Python 3.12: a dropped reference is harmless")
@pytest.mark.parametrize("queued", [False, True], ids=["direct", "queued from a thread"])
def test_none_sent_thousands_of_times_keeps_its_reference_count(qtbot: Any, queued: bool) -> None:
    emitter, receiver = _Emitter(), _Receiver()
    receiver.expect_none = True
    _connect(emitter, receiver, queued)
    before = sys.getrefcount(None)

    _emit_many(qtbot, queued, lambda: emitter.value.emit(None), receiver)

    assert abs(sys.getrefcount(None) - before) < EMITS // 10
