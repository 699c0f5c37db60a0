"""Open the model library, download from the local hub, cancel or close the window mid-download:
200 times in one process, without a crash.

The regression behind it: the download thread emitted signals *of the DownloadWidget* (and the
library's job thread signals of its LibraryJobs), objects the GUI thread deletes when the window
goes. PySide checks the emitter, releases the GIL and calls ``QMetaObject::metacall`` on the bare
C++ pointer; a window deleted in that gap made the download thread call into freed memory:
``Fatal Python error: Segmentation fault``, or a download failing with a garbage ``TypeError``.
Progress reports are unthrottled here, so the thread emits on every chunk while the window is
deleted; with that code most runs of this test died within a few dozen rounds.

Each round checks what a user sees: the window shows the cancelled state, no model file appears
in the models folder or the library's list, and the resumable ``.incomplete`` file holds only
bytes of the real file. The last round's partial file is kept: the download after the 200 rounds
resumes from it, completes and verifies.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

import shiboken6  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from desktop_app.library.catalog import CatalogFile, load_catalog  # noqa: E402
from desktop_app.library.downloads import DownloadTask  # noqa: E402
from desktop_app.library.errors import DownloadCancelled  # noqa: E402
from desktop_app.ui.models.model_library import ModelLibraryWindow  # noqa: E402
from tests.library.hub_server import CHUNK, FakeHub  # noqa: E402

ROUNDS = 200
FILE_BYTES = 128 * CHUNK  # 8 MiB
CHUNK_DELAY_S = 0.01  # a whole download takes >= 1.3 s: every round cancels mid-way, even on a loaded machine
WAIT_MS = 10_000

# How each round ends: the user presses Cancel, or closes the library while progress flows, or
# closes it at once (the folder scan and the hub's HEAD still in flight).
MODES = ("cancel", "close-while-downloading", "close-at-once")

LibraryFactory = Callable[..., ModelLibraryWindow]


@pytest.fixture
def library_windows(qtbot, hub: FakeHub) -> Iterator[LibraryFactory]:  # noqa: F811
    """Library windows on the local hub; any a failing round left open are closed afterwards."""
    made: list[ModelLibraryWindow] = []

    def make(**download_options: object) -> ModelLibraryWindow:
        window = ModelLibraryWindow(endpoint=hub.endpoint, **download_options)
        made.append(window)
        window.show()
        window.refresh()  # as ModelLoader.open_library does: a scan job runs while we go on
        return window

    yield make
    for window in made:
        if shiboken6.isValid(window):
            window.close()
            window.deleteLater()


def _start_download(window: ModelLibraryWindow) -> DownloadTask:
    window.tabs.setCurrentIndex(2)  # the catalog
    window.catalog_tab.select(load_catalog()[0])  # its row depends on what fits this machine
    window.download_target_button.click()
    task = window.downloads._task
    assert task is not None and window.downloads.cancel_button.isEnabled()
    return task


def _close(qtbot, window: ModelLibraryWindow) -> None:
    """What closing and destroying the window does (MainWindow deletes its library with itself)."""
    window.close()
    window.deleteLater()
    qtbot.waitUntil(lambda: not shiboken6.isValid(window), timeout=WAIT_MS)


def _check_partial(models_dir: Path, entry: CatalogFile, data: bytes, keep: bool) -> None:  # noqa: F811
    """No model file; what arrived is a true prefix of the file (a later download resumes from
    it); unless ``keep``, delete it so that the next round downloads (and cancels) afresh."""
    name = Path(entry.file).name
    assert not (models_dir / name).exists(), "a cancelled download left a model file"
    partials = list(models_dir.glob(f"{name}.*.incomplete"))
    assert len(partials) <= 1, partials
    for partial in partials:
        kept = partial.read_bytes()
        assert len(kept) < len(data) and data.startswith(kept)
        if not keep:
            partial.unlink()


@pytest.mark.slow  # a stress loop of 200 downloads
def test_open_close_and_cancel_200_times_without_a_crash(
    qtbot,
    hub: FakeHub,
    models_dir: Path,
    library_windows: LibraryFactory,  # noqa: F811
) -> None:
    entry = load_catalog()[0].target
    data = hashlib.sha256(b"specchat").digest() * (FILE_BYTES // 32)
    hub.add_file(entry.repo, entry.file, data, chunk_delay_s=CHUNK_DELAY_S)

    for round_ in range(ROUNDS):
        mode = MODES[round_ % len(MODES)]
        window = library_windows(report_interval_s=0.0)  # progress on every chunk: the most emits
        task = _start_download(window)
        widget = window.downloads

        if mode == "cancel":
            qtbot.waitUntil(lambda widget=widget: widget.bar.value() > 0, timeout=WAIT_MS)
            with qtbot.waitSignal(widget.cancelled, timeout=WAIT_MS):
                qtbot.mouseClick(widget.cancel_button, Qt.MouseButton.LeftButton)
            assert widget.title.text() == "Download cancelled"
            assert "cancelled" in widget.detail.text() and not widget.cancel_button.isEnabled()
            assert 0 < widget.bar.value() < widget.bar.maximum()
            with qtbot.waitSignal(window.refreshed, timeout=WAIT_MS):
                window.refresh()
            assert [m for m in window.models if not m.builtin] == []  # no half-downloaded model listed
            _close(qtbot, window)
        else:
            if mode == "close-while-downloading":
                qtbot.waitUntil(lambda widget=widget: widget.bar.value() > 0, timeout=WAIT_MS)
            _close(qtbot, window)  # the download thread keeps reporting while the window goes

        qtbot.waitUntil(lambda task=task: not task.running, timeout=WAIT_MS)
        assert isinstance(task.error, DownloadCancelled), f"round {round_} ({mode}): {task.error!r}"
        assert task.result is None
        _check_partial(models_dir, entry, data, keep=round_ == ROUNDS - 1)

    # After all that, the next download resumes from what the last round kept and verifies.
    window = library_windows()  # the default report interval
    with qtbot.waitSignal(window.downloads.finished, timeout=30_000) as finished:
        _start_download(window)
    path = models_dir / Path(entry.file).name
    assert finished.args == [str(path)] and path.read_bytes() == data
    assert hub.seen("GET", cdn=True)[-1].headers.get("range", "").startswith("bytes=")  # it resumed
    assert "verified" in window.downloads.detail.text()
    _close(qtbot, window)
