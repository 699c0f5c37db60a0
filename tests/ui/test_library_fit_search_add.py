"""The model library (issue 35, point 12): its size on screen, the built-in demo model, what fits
this machine, search, adding a file in place, and plain download errors with Retry."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from desktop_app import paths  # noqa: E402
from desktop_app.engine.model_speeds import ModelSpeeds  # noqa: E402
from desktop_app.engine.stats import GenerationStats  # noqa: E402
from desktop_app.library.fit import MachineMemory  # noqa: E402
from desktop_app.library.speed import SpeedGuess, speed_text  # noqa: E402
from desktop_app.ui.models.model_library import MODEL_COLUMNS, ModelLibraryWindow  # noqa: E402
from tests.library.hub_server import FakeHub  # noqa: E402

GB = 10**9


def _library(qtbot, **options) -> ModelLibraryWindow:
    window = ModelLibraryWindow(**options)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.refreshed, timeout=20_000):
        window.refresh()
    return window


def _show_catalog(qtbot, library: ModelLibraryWindow) -> None:
    library.tabs.setCurrentWidget(library.catalog_tab)
    library.show()
    qtbot.waitExposed(library)


def test_the_library_opens_at_a_sensible_size_on_screen_centred_on_the_window(qtbot, make_window) -> None:
    window = make_window()
    area = window.screen().availableGeometry()

    window.library_action.trigger()
    library = window.library
    assert library is not None
    qtbot.waitExposed(library)

    frame = library.frameGeometry()
    assert library.width() >= min(900, area.width() - 40) and library.height() >= min(600, area.height() - 60)
    assert area.contains(frame), (frame, area)
    centre, expected = frame.center(), window.frameGeometry().center()
    inside = area.adjusted(library.width() // 2, library.height() // 2, -library.width() // 2, -library.height() // 2)
    if inside.contains(expected):  # centred on the main window unless that would leave the screen
        assert abs(centre.x() - expected.x()) <= 2 and abs(centre.y() - expected.y()) <= 2


def test_the_builtin_demo_model_is_listed_and_cannot_be_deleted(qtbot, models_dir: Path, default_model: Path) -> None:
    library = _library(qtbot)

    assert library.models[0].path == default_model
    assert library.model_table.item(0, 6).text() == "built-in demo"
    library.model_table.selectRow(0)
    assert not library.delete_button.isEnabled()
    with qtbot.waitSignal(library.target_chosen) as chosen:  # it can still be loaded from here
        library.target_button.click()
    assert chosen.args == [str(default_model)]


def test_pairs_that_do_not_fit_say_what_they_need_and_come_last(qtbot, models_dir: Path) -> None:
    library = _library(qtbot, memory=MachineMemory(23 * GB))
    tab = library.catalog_tab

    needs_70b = tab.fit_text("llama-3.3-70b-instruct")
    assert needs_70b.startswith("needs ~47.") and needs_70b.endswith("this machine has 23.0 GB")
    column = [library.catalog_table.item(r, 1).text() for r in range(library.catalog_table.rowCount())]
    assert needs_70b in column
    fits = [text.startswith("fits") for text in column]
    assert fits == sorted(fits, reverse=True) and fits[0] and not fits[-1]
    assert tab.fit_text("qwen2.5-7b-instruct").startswith("fits: needs ~6.")
    # a bigger machine: the same pair fits and moves up
    tab.set_memory(MachineMemory(64 * GB))
    assert tab.fit_text("llama-3.3-70b-instruct").startswith("fits")


def test_the_catalog_and_the_local_models_say_how_fast_each_would_run_here(qtbot, models_dir: Path) -> None:
    """Issue 49, point 4: a 32B pair that fits the memory of a two-core machine was simply "fits";
    now each row says its predicted speed here, the slow ones marked, the fast ones that fit first."""
    library = _library(qtbot, memory=MachineMemory(23 * GB))
    tab = library.catalog_tab
    tab.set_speed(SpeedGuess(5.0))  # two CPU cores (docs/speed-advice.md)
    big = next(p for p in tab.pairs if p.id == "exaone-4.0-32b")
    assert tab.fit_text(big.id).startswith("fits")
    assert (
        tab.speed_text(big.id)
        == f"{speed_text(SpeedGuess(5.0).of_pair(big))} (slow)"
        == "about 0.3 tokens/s here (slow)"
    )
    first = tab.catalog[0]
    assert tab.fit_text(first.id).startswith("fits") and tab.speed_text(first.id) == "about 6 tokens/s here"
    assert tab.speed_text("qwen3.5-35b-a3b") == "about 3 tokens/s here (slow)"  # a MoE reads its active share
    tab.set_speed(SpeedGuess(50.0))  # a machine ten times faster
    assert tab.speed_text(big.id) == "about 3 tokens/s here (slow)"
    assert tab.speed_text("llama-3.1-8b-instruct") == "about 10 tokens/s here"
    # the local files: the built-in model's row, predicted from its size until it has run here
    column = MODEL_COLUMNS.index("Speed here")
    builtin = library.models[0]
    assert library.model_table.item(0, column).text() == speed_text(tab.speed.tokens_per_s(builtin.size_bytes))
    answer = GenerationStats(generated_tokens=64, decode_s=2.0)  # 32 tokens/s
    ModelSpeeds(paths.model_speeds_file).remember(builtin.path, builtin.size_bytes, False, answer)
    with qtbot.waitSignal(library.refreshed, timeout=20_000):
        library.refresh()
    assert library.model_table.item(0, column).text() == "32 tokens/s here (measured)"


def test_the_search_box_filters_the_catalog_by_name_and_family(qtbot, models_dir: Path) -> None:
    library = _library(qtbot, memory=MachineMemory(23 * GB))
    tab = library.catalog_tab
    everything = len(tab.visible_pairs())

    qtbot.keyClicks(tab.search, "gemma-4")
    assert tab.visible_pairs() and {p.family for p in tab.visible_pairs()} == {"gemma-4"}
    tab.search.clear()
    qtbot.keyClicks(tab.search, "coder")
    assert tab.visible_pairs() and all("coder" in p.name.lower() for p in tab.visible_pairs())
    tab.search.clear()
    assert len(tab.visible_pairs()) == everything > 15


def test_adding_a_file_uses_it_in_place_and_copies_only_on_request(
    qtbot, models_dir: Path, models, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "downloads" / "draft.gguf"
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(models.draft.read_bytes())
    library = _library(qtbot)
    assert not library.copy_box.isChecked()  # linking is the default

    with qtbot.waitSignal(library.refreshed, timeout=20_000):
        library.import_file(elsewhere)

    added = [m for m in library.models if not m.builtin]
    assert [(m.path, m.linked) for m in added] == [(elsewhere, True)]
    assert list(models_dir.glob("*.gguf")) == []  # no copy
    row = [m.path for m in library.models].index(elsewhere)
    assert library.model_table.item(row, 6).text() == f"linked from {elsewhere.parent}"
    library.model_table.selectRow(row)
    assert library.delete_button.text() == "Remove"
    library.confirm = lambda _question: True
    with qtbot.waitSignal(library.refreshed, timeout=20_000):
        library.delete_button.click()
    assert [m for m in library.models if not m.builtin] == [] and elsewhere.exists()

    with qtbot.waitSignal(library.refreshed, timeout=20_000):
        library.import_file(elsewhere, copy=True)
    assert [m.path for m in library.models if not m.builtin] == [models_dir / "draft.gguf"]


def test_offline_download_says_no_internet_connection_with_a_retry(qtbot, models_dir: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on: as good as no network
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    library = _library(qtbot, memory=MachineMemory(23 * GB), endpoint=f"http://127.0.0.1:{port}", timeout=5)
    _show_catalog(qtbot, library)
    library.catalog_tab.select(library.catalog[0])

    with qtbot.waitSignal(library.error, timeout=20_000) as error:
        library.download_target_button.click()

    plain = "No internet connection: the model could not be downloaded."
    assert error.args == [plain] and library.downloads.detail.text() == plain
    assert "Errno" not in library.status.text() and "HF_ENDPOINT" not in library.status.text()
    assert library.downloads.retry_button.isVisible()


def test_a_404_is_said_plainly_and_retry_downloads_once_the_file_is_there(
    qtbot,
    hub: FakeHub,
    models_dir: Path,
    models,  # noqa: F811
) -> None:
    library = _library(qtbot, memory=MachineMemory(23 * GB), endpoint=hub.endpoint)
    _show_catalog(qtbot, library)
    pair = next(p for p in library.catalog if p.draft is not None)  # the first with a draft file
    library.catalog_tab.select(pair)

    with qtbot.waitSignal(library.error, timeout=20_000) as error:
        library.download_draft_button.click()

    assert error.args[0] == f"Hugging Face answered 404: {pair.draft.repo}/{pair.draft.file} was not found."
    retry = library.downloads.retry_button
    assert retry.isVisible()
    hub.add_file(pair.draft.repo, pair.draft.file, models.draft)
    with qtbot.waitSignal(library.refreshed, timeout=30_000):
        retry.click()
    assert [m.path.name for m in library.models if not m.builtin] == [pair.draft.file]
    assert not retry.isVisible()
