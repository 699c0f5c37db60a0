"""The library's Hugging Face tab (issue 49): search the (fake) hub for GGUF repositories, pick one,
see its quantizations with size, fit and predicted speed, the suggested one selected, download
it; without a network, one plain line and a window that keeps answering."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from desktop_app.library.fit import MachineMemory  # noqa: E402
from desktop_app.library.hub_search import NO_CONNECTION  # noqa: E402
from desktop_app.library.speed import SpeedGuess  # noqa: E402
from desktop_app.ui.models.hub_tab import FILE_COLUMNS, REPO_COLUMNS  # noqa: E402
from desktop_app.ui.models.model_library import ModelLibraryWindow  # noqa: E402
from tests.library.hub_server import FakeHub  # noqa: E402

GB = 10**9
REPO = "someone/Tiny-Chat-GGUF"
SHOTS = os.environ.get("SPECCHAT_SHOTS")  # a folder: the tab is saved there as PNG, to look at


def _library(qtbot, **options) -> ModelLibraryWindow:
    window = ModelLibraryWindow(**options)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.refreshed, timeout=20_000):
        window.refresh()
    window.tabs.setCurrentWidget(window.hub_tab)
    window.show()
    qtbot.waitExposed(window)
    window.catalog_tab.set_speed(SpeedGuess(5.0))  # two CPU cores (docs/speed-advice.md)
    return window


def _cells(table, columns: tuple[str, ...]) -> list[dict[str, str]]:
    return [{c: table.item(r, i).text() for i, c in enumerate(columns)} for r in range(table.rowCount())]


def test_search_pick_a_repository_see_quantizations_and_download_the_suggested(
    qtbot, hub: FakeHub, models_dir: Path, models
) -> None:
    data = models.draft.read_bytes()
    hub.add_file(REPO, "Tiny-Chat-Q4_K_M.gguf", data, listed_size=int(0.8 * GB))  # served: the real file
    hub.add_file(REPO, "Tiny-Chat-Q2_K.gguf", b"q2", listed_size=int(0.5 * GB))
    hub.add_file(REPO, "Tiny-Chat-Q8_0.gguf", b"q8", listed_size=int(1.6 * GB))
    for part in (1, 2):
        hub.add_file(REPO, f"Tiny-Chat-F16-0000{part}-of-00002.gguf", b"f16", listed_size=15 * GB)
    hub.add_file(REPO, "README.md", b"# tiny")
    hub.add_file("other/Tiny-Chat-Old-GGUF", "old-Q4_0.gguf", b"old")
    hub.repos[REPO].downloads, hub.repos[REPO].likes = 12_345, 67
    library = _library(qtbot, memory=MachineMemory(23 * GB), endpoint=hub.endpoint)
    tab = library.hub_tab

    qtbot.keyClicks(tab.search, "Tiny-Chat")
    with qtbot.waitSignal(tab.searched, timeout=20_000):
        tab.search_button.click()

    results = _cells(tab.repo_table, REPO_COLUMNS)
    assert [r["Repository"] for r in results] == [REPO, "other/Tiny-Chat-Old-GGUF"]  # most downloaded first
    assert results[0] == {"Repository": REPO, "Downloads": "12,345", "Likes": "67", "Updated": "2026-11-02"}
    with qtbot.waitSignal(tab.listed, timeout=20_000):
        tab.select_repo(REPO)

    rows = _cells(tab.file_table, FILE_COLUMNS)
    assert [r["Quantization"] for r in rows] == ["Q2_K", "Q4_K_M (suggested)", "Q8_0", "F16"]
    q4 = rows[1]
    assert q4["Size"] == "800.0 MB" and q4["This machine"] == "fits: needs ~1.4 GB of 23.0 GB"
    assert q4["Speed here"] == "about 6 tokens/s here"
    assert rows[2]["Speed here"] == "about 3 tokens/s here (slow)"
    assert rows[3]["Size"] == "30.0 GB" and rows[3]["This machine"].startswith("needs ~33.5 GB")
    assert rows[3]["File"] == "Tiny-Chat-F16-00001-of-00002.gguf (+1 parts)"
    assert tab.selected_choice() == tab.suggested and tab.suggested.quantization == "Q4_K_M"
    assert (
        tab.status.text()
        == f"{REPO}: 4 quantizations; Q4_K_M suggested: the largest that fits and runs at 5+ tokens/s here."
    )
    # a faster machine: Q8_0 becomes fast enough; the marks follow, the selection stays
    library.catalog_tab.set_speed(SpeedGuess(20.0))
    assert _cells(tab.file_table, FILE_COLUMNS)[2]["Speed here"] == "about 12 tokens/s here"
    assert tab.suggested.quantization == "Q8_0" and tab.selected_choice().quantization == "Q4_K_M"
    assert "Q8_0 suggested" in tab.status.text()
    if SHOTS:
        tab.grab().save(str(Path(SHOTS) / "hub-tab.png"))

    with qtbot.waitSignal(library.refreshed, timeout=30_000):
        tab.download_button.click()
    assert (models_dir / "Tiny-Chat-Q4_K_M.gguf").read_bytes() == data
    assert "Tiny-Chat-Q4_K_M.gguf" in [m.path.name for m in library.models]
    assert tab.downloads.title.text() == "Downloaded Tiny-Chat-Q4_K_M.gguf"


def test_a_split_quantization_downloads_every_part(qtbot, hub: FakeHub, models_dir: Path) -> None:
    for part in (1, 2):
        hub.add_file(REPO, f"F16/Tiny-Chat-F16-0000{part}-of-00002.gguf", f"part {part}".encode())
    library = _library(qtbot, memory=MachineMemory(23 * GB), endpoint=hub.endpoint)
    tab = library.hub_tab
    tab.search.setText("tiny")
    with qtbot.waitSignal(tab.searched, timeout=20_000):
        tab.run_search()
    with qtbot.waitSignal(tab.listed, timeout=20_000):
        tab.select_repo(REPO)
    assert tab.selected_choice().quantization == "F16"

    with qtbot.waitSignal(tab.downloaded, timeout=30_000):
        tab.download_button.click()
    assert sorted(p.name for p in models_dir.glob("*.gguf")) == [
        "Tiny-Chat-F16-00001-of-00002.gguf",
        "Tiny-Chat-F16-00002-of-00002.gguf",
    ]


def test_without_a_network_the_tab_says_so_in_one_line_and_never_freezes(qtbot, models_dir: Path) -> None:
    with socket.socket() as silent:  # accepts connections and never answers: a network that hangs
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        library = _library(qtbot, memory=MachineMemory(23 * GB), endpoint=f"http://127.0.0.1:{port}", timeout=2)
        tab = library.hub_tab
        tab.search.setText("qwen")

        start = time.monotonic()
        tab.search_button.click()
        assert time.monotonic() - start < 1.0  # the request runs off the GUI thread
        assert tab.status.text().startswith("Searching Hugging Face")
        with qtbot.waitSignal(tab.searched, timeout=20_000):
            pass
    assert tab.status.text() == NO_CONNECTION
    assert tab.repo_table.rowCount() == 0 and not tab.download_button.isEnabled()
    if SHOTS:
        tab.grab().save(str(Path(SHOTS) / "hub-tab-offline.png"))
