"""The local library: listing with metadata, import, delete, and the compatibility matrix."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from desktop_app.engine import VocabOnlyModel
from desktop_app.engine.api import DrafterKind
from desktop_app.engine.errors import ModelLoadError
from desktop_app.library.errors import LibraryError
from desktop_app.library.local import compatibility_matrix, delete_model, import_model, scan_models
from desktop_app.library.vocab import check_pair


def test_scan_describes_models_and_flags_broken_files(models_dir: Path, models, tmp_path: Path) -> None:
    for path in (models.target, models.truncated):
        shutil.copy(models.target if path == models.target else path, models_dir / path.name)
    extra = tmp_path / "elsewhere"
    extra.mkdir()
    shutil.copy(models.draft, extra / "draft.gguf")
    (models_dir / "half.gguf.abc.incomplete").write_bytes(b"GGUF")  # a download in progress: not a model

    found = {m.path.name: m for m in scan_models([extra])}

    assert set(found) == {"target.gguf", "truncated.gguf", "draft.gguf"}
    target = found["target.gguf"]
    assert (target.architecture, target.quantization, target.context_length) == ("llama", "Q8_0", 4096)
    assert target.n_parameters > found["draft.gguf"].n_parameters > 0
    assert target.size_bytes == models.target.stat().st_size and target.usable
    assert "truncated" in (found["truncated.gguf"].error or "")


def test_import_copies_a_valid_model_and_refuses_a_broken_one(models_dir: Path, models) -> None:
    imported = import_model(models.draft)

    assert imported.path == models_dir / "draft.gguf" and imported.usable
    assert imported.path.read_bytes() == models.draft.read_bytes()
    with pytest.raises(LibraryError, match="already in the library"):
        import_model(models.draft)
    with pytest.raises(ModelLoadError, match="truncated"):
        import_model(models.truncated)
    assert not (models_dir / "truncated.gguf").exists()


def test_delete_removes_library_files_only(models_dir: Path, models) -> None:
    copy = models_dir / "draft.gguf"
    shutil.copy(models.draft, copy)

    delete_model(copy)

    assert not copy.exists()
    with pytest.raises(LibraryError, match="not in the model library"):
        delete_model(models.draft)
    assert models.draft.exists()


def test_a_model_s_projector_is_listed_as_such_never_paired_and_deleted_with_it(
    models_dir: Path, models, vision_model
) -> None:
    target = Path(shutil.copy(vision_model.model, models_dir / "vision.gguf"))
    shutil.copy(models.draft, models_dir / "draft.gguf")
    projector = Path(shutil.copy(vision_model.mmproj, models_dir / "mmproj-vision.gguf"))
    other = Path(shutil.copy(vision_model.mmproj, models_dir / "mmproj-another.gguf"))

    listed = {m.path.name: m for m in scan_models()}
    assert listed["mmproj-vision.gguf"].error is not None and "vision projector" in listed["mmproj-vision.gguf"].error
    verdicts = compatibility_matrix(list(listed.values()))
    assert "mmproj-vision.gguf" not in {v.draft.path.name for v in verdicts} | {v.target.path.name for v in verdicts}

    delete_model(target, with_projector=True)
    assert not target.exists() and not projector.exists() and other.exists()
    delete_model(models_dir / "draft.gguf", with_projector=True)  # no projector of its own: the rest stays
    assert other.exists()


def test_vocab_only_model_reads_what_the_compatibility_check_needs(models) -> None:
    with VocabOnlyModel(models.target) as vocab:
        assert vocab.n_vocab == 49152 and vocab.token_text(300) != b""
        assert isinstance(vocab.add_bos, bool) and vocab.eos_id >= 0

    verdict, drafting = check_pair(models.target, models.draft)
    assert verdict.compatible and drafting.drafters == (DrafterKind.MODEL, DrafterKind.NGRAM)
    other, other_drafting = check_pair(models.target, models.draft_other_vocab)
    assert not other.compatible and "token 300 differs" in other.summary()
    assert other_drafting.drafters == (DrafterKind.NGRAM,) and "token 300 differs" in other_drafting.summary()


def test_compatibility_matrix_pairs_smaller_drafts_with_targets(models_dir: Path, models) -> None:
    for path in (models.target, models.draft, models.draft_other_vocab, models.not_gguf):
        shutil.copy(path, models_dir / path.name)

    verdicts = {(v.target.path.name, v.draft.path.name): v.compatibility for v in compatibility_matrix(scan_models())}

    assert set(verdicts) == {("target.gguf", "draft.gguf"), ("target.gguf", "draft-other-vocab.gguf")}
    assert verdicts[("target.gguf", "draft.gguf")].compatible
    assert not verdicts[("target.gguf", "draft-other-vocab.gguf")].compatible


def test_scan_follows_links_and_passes_over_link_loops(models_dir: Path, models, tmp_path: Path) -> None:
    import time

    shutil.copy(models.target, models_dir / "target.gguf")
    elsewhere = tmp_path / "big-disk"
    elsewhere.mkdir()
    shutil.copy(models.draft, elsewhere / "draft.gguf")
    (models_dir / "linked").symlink_to(elsewhere, target_is_directory=True)  # models kept elsewhere, linked in
    (models_dir / "again.gguf").symlink_to(models_dir / "target.gguf")  # the same file twice: listed once
    (models_dir / "loop").symlink_to(models_dir / "loop")  # ln -s loop loop
    (models_dir / "loop.gguf").symlink_to(models_dir / "loop.gguf")  # once: RuntimeError: Symlink loop
    (models_dir / "gone.gguf").symlink_to(tmp_path / "deleted.gguf")
    for name in ("up", "a", "b"):  # links to folders above: with two of them, a naive walk never ends
        (models_dir / name).symlink_to(models_dir.parent if name == "up" else models_dir, target_is_directory=True)

    start = time.perf_counter()
    found = scan_models()

    assert time.perf_counter() - start < 5
    assert sorted(m.path.name for m in found) == ["draft.gguf", "target.gguf"]
    assert all(m.usable for m in found)
