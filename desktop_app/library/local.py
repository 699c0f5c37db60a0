"""The GGUF files on this computer: list them with their metadata, delete, import, and see which
drafts fit which targets.

Metadata comes from the file header (no weights are loaded); compatibility from vocab-only loads,
in a child process (vocab.py): llama.cpp never runs in the caller's process.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop_app import paths
from desktop_app.engine import (
    DraftCompatibility,
    DraftingSupport,
    EngineError,
    find_default_model,
    has_mtp_layers,
    is_assistant,
    read_gguf,
)
from desktop_app.engine.projector_names import paired_projector
from desktop_app.library.errors import DiskSpaceError, LibraryError
from desktop_app.library.links import add_link, linked_paths, remove_link
from desktop_app.library.vocab import checked_pairs


@dataclass(frozen=True)
class LocalModel:
    """One .gguf file and what its header says; ``error`` is set when it cannot be used."""

    path: Path
    name: str
    architecture: str
    n_parameters: int
    quantization: str
    context_length: int | None
    size_bytes: int
    error: str | None = None
    drafting: str = ""  # what the file itself drafts with: built-in MTP layers, or "is a Gemma 4 assistant"
    linked: bool = False  # used where it is (links.py), not a file in the library's folders
    builtin: bool = False  # the demo model that comes with SpecChat: listed, never deleted

    @property
    def usable(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "name": self.name,
            "architecture": self.architecture,
            "n_parameters": self.n_parameters,
            "quantization": self.quantization,
            "context_length": self.context_length,
            "size_bytes": self.size_bytes,
            "error": self.error,
            "drafting": self.drafting,
            "linked": self.linked,
            "builtin": self.builtin,
        }


def describe(path: str | Path, linked: bool = False, builtin: bool = False) -> LocalModel:
    """Read one file's header; a broken file yields a LocalModel with ``error`` set."""
    path = Path(path)
    size = path.stat().st_size if path.exists() else 0
    try:
        info = read_gguf(path)
    except EngineError as exc:
        return LocalModel(path, path.stem, "unknown", 0, "unknown", None, size, str(exc), linked=linked)
    name = str(info.get("general.name") or path.stem)
    if info.architecture == "clip":  # a vision projector: the engine loads it with the model beside it
        problem = "a vision projector (mmproj), not a model: it lets the model it is named after see images"
        return LocalModel(path, name, "clip", info.n_parameters, info.quantization, None, size, problem, linked=linked)
    drafting = "built-in MTP" if has_mtp_layers(info) else "Gemma 4 assistant drafter" if is_assistant(info) else ""
    return LocalModel(
        path,
        name,
        info.architecture,
        info.n_parameters,
        info.quantization,
        info.context_length,
        size,
        drafting=drafting,
        linked=linked,
        builtin=builtin,
    )


def builtin_model() -> LocalModel | None:
    """The demo model that comes with SpecChat, when it is installed."""
    path = find_default_model()
    return describe(path, builtin=True) if path is not None else None


def library_folders(extra: Iterable[str | Path] = ()) -> list[Path]:
    """The models folder first, then any extra folders (duplicates dropped)."""
    folders: list[Path] = []
    for folder in (paths.models_dir(), *map(Path, extra)):
        folder = _real(folder.expanduser())
        if folder not in folders:
            folders.append(folder)
    return folders


def scan_models(extra_folders: Iterable[str | Path] = (), include_builtin: bool = False) -> list[LocalModel]:
    """Every .gguf under the library folders and every linked file (links.py), sorted by name;
    with ``include_builtin``, the built-in demo model first. A file reached twice (through a
    link) is listed once, under its own name rather than a link's, and links that lead nowhere
    or in a circle are passed over; a linked file that is gone is listed with the reason."""
    chosen: dict[tuple[int, int], Path] = {}  # (device, inode) -> the path listed for that file
    for folder in library_folders(extra_folders):
        for path in _gguf_files(folder):
            try:
                info = path.stat()
            except OSError:  # a dangling link, or a link loop (ELOOP): there is no file to list
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            key = (info.st_dev, info.st_ino)
            if key not in chosen or (chosen[key].is_symlink() and not path.is_symlink()):
                chosen[key] = path
    found = [describe(path) for path in chosen.values()]
    for path in linked_paths():
        try:
            info = path.stat()
        except OSError:
            found.append(describe(path, linked=True))  # its error says the file is missing
            continue
        if (info.st_dev, info.st_ino) not in chosen:
            chosen[(info.st_dev, info.st_ino)] = path
            found.append(describe(path, linked=True))
    found.sort(key=lambda m: (m.path.name.lower(), str(m.path)))
    builtin = builtin_model() if include_builtin else None
    return [builtin, *found] if builtin is not None else found


def _gguf_files(folder: Path) -> Iterator[Path]:
    """The .gguf names under ``folder``, following links to folders, each folder once.

    Following links lets people keep models elsewhere and link them in; visiting each folder
    (device, inode) once is what keeps a link to a folder above, or two links to the same
    folder, from recursing until the path is too long (or exponentially, with two such links)."""
    visited: set[tuple[int, int]] = set()
    for root, dirs, files in os.walk(folder, followlinks=True):  # unreadable folders are skipped
        try:
            info = os.stat(root)
        except OSError:  # gone or looping since os.walk listed it
            dirs.clear()
            continue
        if (info.st_dev, info.st_ino) in visited:
            dirs.clear()
            continue
        visited.add((info.st_dev, info.st_ino))
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".gguf"):
                yield Path(root, name)


def _real(path: Path) -> Path:
    """``path`` with links resolved; as given (made absolute) when a link loop stops resolving it."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):  # Python 3.11 raises RuntimeError("Symlink loop"), later ones OSError
        return path.absolute()


def own_projector(path: Path) -> Path | None:
    """The vision projector saved with a model (``mmproj-<model stem>.gguf`` beside it, as the
    catalog names it), if it is there."""
    projector = paired_projector(path)
    return projector if projector != path and projector.is_file() else None


def delete_model(path: str | Path, extra_folders: Iterable[str | Path] = (), with_projector: bool = False) -> None:
    """Delete a model file, refusing anything outside the library folders; a linked file is
    only forgotten (it stays where it is). ``with_projector``: its own projector goes too."""
    path = Path(path)
    projector = own_projector(path) if with_projector else None
    if projector is not None:
        delete_model(projector, extra_folders)
    if remove_link(path):
        return
    real = _real(path)
    if not any(real.is_relative_to(folder) for folder in library_folders(extra_folders)):
        raise LibraryError(f"{path} is not in the model library; only files in the library can be deleted here")
    if not path.is_file():
        raise LibraryError(f"{path.name} is not in the library (already deleted?)")
    path.unlink()


def link_model(source: str | Path) -> LocalModel:
    """Add a GGUF file to the library where it is, after checking that it is complete: the
    library records its path and copies nothing."""
    source = Path(source).absolute()
    read_gguf(source)  # not GGUF / truncated: ModelLoadError with the reason
    for folder in library_folders():
        if _real(source).is_relative_to(folder):
            raise LibraryError(f"{source.name} is already in the library ({source})")
    add_link(source)
    return describe(source, linked=True)


def import_model(source: str | Path, dest_dir: str | Path | None = None) -> LocalModel:
    """Copy a GGUF file from disk into the models folder after checking that it is complete."""
    source = Path(source)
    read_gguf(source)  # not GGUF / truncated: ModelLoadError with the reason
    folder = Path(dest_dir) if dest_dir else paths.models_dir()
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / source.name
    if dest.exists():
        raise LibraryError(f"{dest.name} is already in the library ({dest})")
    size = source.stat().st_size
    free = shutil.disk_usage(folder).free
    if free < size:
        raise DiskSpaceError(
            f"not enough disk space to import {source.name}: needs {size / 1e9:.2f} GB, {free / 1e9:.2f} GB free"
        )
    temp = dest.with_name(dest.name + ".importing")
    try:
        shutil.copyfile(source, temp)
        temp.replace(dest)
    finally:
        temp.unlink(missing_ok=True)
    return describe(dest)


@dataclass(frozen=True)
class PairVerdict:
    target: LocalModel
    draft: LocalModel
    compatibility: DraftCompatibility
    drafting: DraftingSupport | None = None  # which drafting the pair supports, and why


def compatibility_matrix(models: Sequence[LocalModel]) -> list[PairVerdict]:
    """Every (target, draft) pair of usable models where the draft is the smaller one; the
    vocabularies are read in a child process (a file that crashes llama.cpp gets a verdict that
    says so)."""
    usable = [m for m in models if m.usable]
    pairs = [
        (t, d)
        for t, target in enumerate(usable)
        for d, draft in enumerate(usable)
        if draft.path != target.path and draft.n_parameters < target.n_parameters
    ]
    if not pairs:
        return []
    checks = checked_pairs([m.path for m in usable], pairs)
    return [PairVerdict(usable[t], usable[d], verdict, drafting) for (t, d), (verdict, drafting) in zip(pairs, checks)]
