"""What fits this machine (with the numbers), files used where they are, and plain download errors."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from desktop_app.library.catalog import load_catalog
from desktop_app.library.downloads import download_file
from desktop_app.library.errors import HubUnreachableError, LibraryError, RemoteNotFoundError
from desktop_app.library.fit import MachineMemory, best_pair, fit_of, sort_by_fit
from desktop_app.library.local import delete_model, link_model, scan_models
from tests.library.hub_server import FakeHub

GB = 10**9


def test_the_70b_pair_does_not_fit_23_gb_and_says_so_with_the_numbers() -> None:
    pairs = {p.id: p for p in load_catalog()}
    laptop = MachineMemory(23 * GB)

    verdict = fit_of(pairs["llama-3.3-70b-instruct"], laptop)

    assert not verdict.fits
    assert verdict.text == f"needs ~{pairs['llama-3.3-70b-instruct'].ram_gb:.1f} GB, this machine has 23.0 GB"
    assert verdict.text.startswith("needs ~47.")
    assert fit_of(pairs["qwen2.5-7b-instruct"], laptop).fits
    # a GPU with more memory than the RAM counts: the pair can live there
    assert fit_of(pairs["llama-3.3-70b-instruct"], MachineMemory(23 * GB, 80 * GB)).fits


def test_pairs_that_fit_come_first_in_catalog_order() -> None:
    pairs = load_catalog()
    order = sort_by_fit(pairs, MachineMemory(16 * GB))

    flags = [f.fits for f in order]
    assert flags == sorted(flags, reverse=True) and True in flags and False in flags
    fitting = [f.pair.id for f in order if f.fits]
    assert fitting == [p.id for p in pairs if p.ram_gb <= 16]


def test_the_suggested_pair_is_the_biggest_chat_pair_with_room_to_spare() -> None:
    pairs = load_catalog()
    for memory_gb in (8, 16, 23, 64):
        best = best_pair(pairs, MachineMemory(memory_gb * GB))
        assert best is not None and "chat" in best.uses and best.ram_gb <= memory_gb * 0.8
        assert all(p.ram_gb <= best.ram_gb for p in pairs if "chat" in p.uses and p.ram_gb <= memory_gb * 0.8)
    assert best_pair(pairs, MachineMemory(1 * GB)) is None  # the smallest chat pair needs ~1.6 GB


def test_a_linked_file_is_listed_where_it_is_and_removing_it_keeps_the_file(
    models_dir: Path, models, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere" / "draft.gguf"
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(models.draft.read_bytes())

    added = link_model(elsewhere)

    assert added.linked and added.path == elsewhere
    assert list(models_dir.glob("*.gguf")) == []  # nothing copied
    listed = scan_models()
    assert [(m.path, m.linked) for m in listed] == [(elsewhere, True)]
    with pytest.raises(LibraryError, match="already in the library"):
        link_model(elsewhere)
    delete_model(elsewhere)
    assert scan_models() == [] and elsewhere.exists()


def test_a_linked_file_that_moved_is_listed_with_the_reason(models_dir: Path, models, tmp_path: Path) -> None:
    moved = tmp_path / "draft.gguf"
    moved.write_bytes(models.draft.read_bytes())
    link_model(moved)
    moved.unlink()

    (listed,) = scan_models()

    assert listed.path == moved and listed.error


def test_the_builtin_demo_model_is_listed_first_when_asked(models_dir: Path, models, default_model: Path) -> None:
    (models_dir / "draft.gguf").write_bytes(models.draft.read_bytes())

    listed = scan_models(include_builtin=True)

    assert [m.path for m in listed] == [default_model, models_dir / "draft.gguf"]
    assert listed[0].builtin and not listed[1].builtin


def test_a_closed_port_reads_no_internet_connection(models_dir: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    with pytest.raises(HubUnreachableError) as info:
        download_file("specchat/tiny-GGUF", "draft.gguf", endpoint=f"http://127.0.0.1:{port}", timeout=5)

    assert info.value.plain == "No internet connection: the model could not be downloaded."
    assert "127.0.0.1" in str(info.value)  # the full reason keeps the details


def test_a_404_reads_hugging_face_answered_404(models_dir: Path, hub: FakeHub) -> None:
    with pytest.raises(RemoteNotFoundError) as info:
        download_file("specchat/missing-GGUF", "draft.gguf", endpoint=hub.endpoint)

    assert info.value.plain == "Hugging Face answered 404: specchat/missing-GGUF/draft.gguf was not found."
