"""The model library window (desktop_app/ui/models/model_library.py), driven with pytest-qt, on its own
and opened from the main window."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from desktop_app.ui.models.model_bar import OPEN_LIBRARY  # noqa: E402
from desktop_app.ui.models.model_library import ModelLibraryWindow  # noqa: E402
from tests.library.hub_server import FakeHub  # noqa: E402
from tests.ui.conftest import LOAD_TIMEOUT_MS  # noqa: E402
from tests.ui.helpers import pick, tip_text  # noqa: E402


def _window(qtbot, **options) -> ModelLibraryWindow:
    window = ModelLibraryWindow(**options)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.refreshed, timeout=20_000):
        window.refresh()
    return window


def _row_of(window: ModelLibraryWindow, name: str) -> int:
    return [m.path.name for m in window.models].index(name)


def _files(window: ModelLibraryWindow) -> list[Path]:
    """The listed model files, less the built-in demo model (always listed first)."""
    return [m.path for m in window.models if not m.builtin]


def test_lists_models_with_metadata_and_which_drafts_fit(qtbot, models_dir: Path, models) -> None:  # noqa: F811
    for path in (models.target, models.draft, models.draft_other_vocab, models.truncated):
        shutil.copy(path, models_dir / path.name)

    window = _window(qtbot)

    table = window.model_table
    cells = {
        table.item(r, 0).text(): [table.item(r, c).text() for c in range(table.columnCount())]
        for r in range(table.rowCount())
    }
    assert cells["target.gguf"][1:5] == ["llama", "6.6M", "Q8_0", "4096"]
    assert "truncated" in cells["truncated.gguf"][6]
    compat = {
        (window.compat_table.item(r, 0).text(), window.compat_table.item(r, 1).text()): window.compat_table.item(
            r, 2
        ).text()
        for r in range(window.compat_table.rowCount())
    }
    assert (
        compat[("target.gguf", "draft.gguf")]
        == "fits: Draft model, Repeats from this chat (draft shares its vocabulary)"
    )
    assert "token 300 differs" in compat[("target.gguf", "draft-other-vocab.gguf")]
    assert window.status.text() == "5 models (1 built in) · 1 draft/target pair fits"
    assert window.catalog_table.rowCount() >= 6


def test_use_as_target_and_draft_emit_the_path(qtbot, models_dir: Path, models) -> None:  # noqa: F811
    shutil.copy(models.draft, models_dir / "draft.gguf")
    window = _window(qtbot)
    window.model_table.selectRow(_row_of(window, "draft.gguf"))

    with qtbot.waitSignal(window.target_chosen) as target:
        window.target_button.click()
    with qtbot.waitSignal(window.draft_chosen) as draft:
        window.draft_button.click()

    assert target.args == draft.args == [str(models_dir / "draft.gguf")]


def test_import_with_copy_and_delete_update_the_list(qtbot, models_dir: Path, models) -> None:  # noqa: F811
    window = _window(qtbot)
    assert _files(window) == []

    with qtbot.waitSignal(window.refreshed, timeout=20_000):
        window.import_file(models.draft, copy=True)
    assert _files(window) == [models_dir / "draft.gguf"]

    window.confirm = lambda _question: True
    window.model_table.selectRow(_row_of(window, "draft.gguf"))
    with qtbot.waitSignal(window.refreshed, timeout=20_000):
        window.delete_button.click()
    assert _files(window) == [] and not (models_dir / "draft.gguf").exists()
    assert models.draft.exists()


def test_downloading_a_catalog_file_adds_it_to_the_list(
    qtbot,
    hub: FakeHub,
    models_dir: Path,
    models,  # noqa: F811
) -> None:
    window = _window(qtbot, endpoint=hub.endpoint)
    row, pair = next((r, p) for r, p in enumerate(window.catalog) if p.draft is not None)  # the first with a draft
    hub.add_file(pair.draft.repo, pair.draft.file, models.draft)
    window.catalog_table.selectRow(row)

    with qtbot.waitSignal(window.refreshed, timeout=30_000):
        window.download_draft_button.click()

    assert [p.name for p in _files(window)] == [pair.draft.file]
    assert window.downloads.bar.value() == window.downloads.bar.maximum()


def test_the_catalog_lists_each_pairs_drafting_method_download_size_and_ram_need(
    qtbot,
    models_dir: Path,  # noqa: F811
) -> None:
    window = _window(qtbot)
    table = window.catalog_table
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert headers == [
        "Pair",
        "This machine",
        "Speed here",
        "Drafting",
        "Uses",
        "Target",
        "Draft",
        "Download",
        "RAM need",
        "License",
    ]
    rows = {
        window.catalog[r].id: [table.item(r, c).text() for c in range(table.columnCount())]
        for r in range(table.rowCount())
    }
    assert len(rows) == len(window.catalog) >= 15
    for pair in window.catalog:
        row = rows[pair.id]
        assert row[3] == pair.drafting_label and row[7] == pair.download_text and row[8] == pair.ram_text
        assert "GB @ 8K ctx" in row[8]
    assert rows["qwen3.6-27b-mtp"][6] == "none (Built-in drafter)"
    assert rows["qwen3-coder-30b-a3b-instruct"][6] == "none (Repeats from this chat)"
    assert rows["gemma-4-12b-it-qat"][6] == "mtp-gemma-4-12B-it-Q8_0.gguf (~465.0 MB)"
    assert rows["qwen2.5-7b-instruct"][3] == "Draft model"
    assert tip_text(table.item(0, 0).toolTip()) == window.catalog[0].notes


def test_download_draft_on_a_pair_without_a_draft_file_says_why(qtbot, models_dir: Path) -> None:  # noqa: F811
    window = _window(qtbot)
    row = [p.id for p in window.catalog].index("qwen3.6-27b-mtp")
    window.catalog_table.selectRow(row)

    with qtbot.waitSignal(window.error) as error:
        window.download_draft_button.click()

    assert "needs no draft file" in error.args[0] and "Built-in drafter" in error.args[0]
    assert not window.downloads.running


def test_the_main_window_opens_the_library_and_loads_a_draft_chosen_there(
    qtbot,
    make_window,
    models_dir: Path,
    models,  # noqa: F811
) -> None:
    draft = models_dir / "draft.gguf"
    shutil.copy(models.draft, draft)
    window = make_window(target_path=models.target)
    assert window.library_action.shortcut().toString() == "Ctrl+L"

    window.library_action.trigger()
    library = window.library
    assert library is not None and library.isVisible() and library.isWindow()
    qtbot.waitUntil(lambda: _files(library) == [draft], timeout=20_000)
    with qtbot.waitSignal(library.refreshed, timeout=20_000):  # reopening rescans the folder
        pick(window.model_bar.draft_picker, OPEN_LIBRARY)  # the pickers offer it too: the same window
    assert window.library is library
    assert window.model_bar.draft_picker.currentText() == "No draft model"

    library.model_table.selectRow(_row_of(library, "draft.gguf"))
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS) as loaded:
        library.draft_button.click()

    assert loaded.args[0].draft.path == str(draft)
    assert window.model_bar.draft_picker.currentText() == "draft.gguf"
    assert window.drafter().value == "model"  # what the next answer drafts with
    assert window.model_bar.badge.text() == "✓ draft fits"
    assert window.settings["draft_path"] == str(draft)
    assert window.settings["recent_files"] == [str(draft)]


def test_a_vision_pair_downloads_with_its_projector_and_deletes_with_it(
    qtbot,
    hub: FakeHub,
    models_dir: Path,
    models,  # noqa: F811
    vision_model,
) -> None:
    window = _window(qtbot, endpoint=hub.endpoint)
    tab = window.catalog_tab
    pairs = {p.id: p for p in window.catalog}
    small, large = pairs["gemma-3-12b-it"], pairs["gemma-3-27b-it"]
    assert small.projector is not None and large.projector is not None
    row = tab.row_of(small.id)
    assert window.catalog_table.item(row, 5).text().endswith(f"+ vision projector ({small.projector.size_text})")
    assert window.catalog_table.item(row, 7).text() == small.download_text  # the projector's bytes counted
    for pair in (small, large):
        hub.add_file(pair.target.repo, pair.target.file, models.draft)
        hub.add_file(pair.draft.repo, pair.draft.file, models.draft)  # type: ignore[union-attr]

    # the projector is missing on the hub: said plainly, naming the file and its pair
    errors: list[str] = []
    window.error.connect(errors.append)
    tab.download_pair(small)
    qtbot.waitUntil(lambda: bool(errors), timeout=60_000)
    own = "mmproj-gemma-3-12b-it-Q4_K_M.gguf"
    assert errors[0].startswith(f"{small.name}: the vision projector {own} did not download. Hugging Face answered 404")
    assert (models_dir / small.target.filename).exists() and not (models_dir / own).exists()

    hub.add_file(small.projector.repo, small.projector.file, vision_model.mmproj)
    with qtbot.waitSignal(tab.downloaded, timeout=30_000):
        window.downloads.retry_button.click()
    # the larger pair's projector has the same name in its repo, yet it is fetched too
    hub.add_file(large.projector.repo, large.projector.file, vision_model.mmproj)
    tab.download_pair(large)
    other = "mmproj-gemma-3-27b-it-Q4_K_M.gguf"
    wanted = {own, other, small.target.filename, large.target.filename}
    qtbot.waitUntil(lambda: wanted <= {p.name for p in _files(window)} and not window.downloads.running, timeout=60_000)

    questions: list[str] = []
    window.confirm = lambda question: questions.append(question) or True
    window.model_table.selectRow(_row_of(window, small.target.filename))
    window.delete_button.click()
    assert questions[0].endswith(f"Its vision projector {own} is deleted with it.")
    gone = {own, small.target.filename}
    qtbot.waitUntil(lambda: not gone & {p.name for p in _files(window)}, timeout=20_000)
    assert not (models_dir / own).exists() and not (models_dir / small.target.filename).exists()
    assert (models_dir / other).exists() and (models_dir / large.target.filename).exists()
