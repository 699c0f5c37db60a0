"""The curated pairs in ``models/catalog.toml``, loaded and checked against a schema.

Every pair names a target GGUF and says how its tokens are drafted (:data:`DRAFTING_METHODS`):
a separate small draft model sharing the tokenizer ("model"), the target's own
multi-token-prediction layers ("mtp"), a Gemma 4 assistant drafter ("assistant") or prompt lookup
("ngram"). The first and third name a draft file too. A vision target names its projector
(``[pair.projector]``, the ``mmproj`` file that lets it see images), saved beside it under a name
made from the target's (engine/projector_names.py). Files are Hugging Face repo ids and paths
inside the repo, so ``specchat models pull REPO FILE`` can fetch any of them. A bad entry raises
:class:`CatalogError` naming the entry and the field.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from desktop_app.engine.api import DrafterKind
from desktop_app.engine.projector_names import paired_projector_name
from desktop_app.library.errors import CatalogError, InvalidNameError
from desktop_app.library.names import check_name, check_repo_id
from desktop_app.library.units import human_size

DEFAULT_CATALOG = Path(__file__).resolve().parents[2] / "models" / "catalog.toml"
SCHEMA_VERSION = 2
USES = frozenset({"chat", "code", "multilingual", "korean", "reasoning"})
# method -> what users read; a pair without a drafting model names prompt lookup, the model-free
# drafter every target has (the other model-free ones come with it)
DRAFTING_METHODS: dict[str, str] = {k.value: k.label for k in DrafterKind if k.needs_model or k is DrafterKind.NGRAM}
METHODS_WITH_DRAFT = frozenset(k.value for k in DrafterKind if k.needs_draft_file)
RUNTIME_OVERHEAD_GB = 0.5  # compute buffers and the runtime itself, on top of weights and KV cache
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
_TOP_KEYS = {"schema_version", "context_tokens", "pair"}
_PAIR_KEYS: dict[str, Any] = {
    "id": str,
    "name": str,
    "family": str,
    "drafting": str,
    "license": str,
    "uses": list,
    "notes": str,
    "kv_cache_gb": (int, float),
    "target": dict,
    "draft": dict,
    "projector": dict,
}
_PAIR_OPTIONAL = {"draft", "projector"}
_FILE_KEYS: dict[str, Any] = {
    "repo": str,
    "file": str,
    "quantization": str,
    "size_bytes": int,
    "size_approx": bool,
    "parameters_b": (int, float),
    "active_parameters_b": (int, float),
    "source": str,
}
_FILE_OPTIONAL = {"quantization", "size_approx", "parameters_b", "active_parameters_b"}
_KIND_NAMES: dict[type, str] = {
    str: "a string",
    int: "an integer",
    bool: "true or false",
    list: "a list",
    dict: "a table",
}


@dataclass(frozen=True)
class CatalogFile:
    """One GGUF file on the hub. ``file`` is its path inside the repo (it may sit in a folder)."""

    repo: str
    file: str
    size_bytes: int
    source: str
    quantization: str = ""
    parameters_b: float | None = None
    size_approx: bool = False
    active_parameters_b: float | None = None  # a mixture of experts: the parameters one token uses
    saved_as: str = ""  # its name in the models folder when not the repo's (a projector's)

    @property
    def filename(self) -> str:
        """The name the file gets in the models folder."""
        return self.saved_as or PurePosixPath(self.file).name

    @property
    def size_gb(self) -> float:
        return self.size_bytes / 1e9

    @property
    def bytes_per_token(self) -> int:
        """The weights one decoded token reads: the whole file, or a mixture of experts' active share."""
        if self.active_parameters_b and self.parameters_b:
            return round(self.size_bytes * min(1.0, self.active_parameters_b / self.parameters_b))
        return self.size_bytes

    @property
    def size_text(self) -> str:
        """``4.7 GB``, or ``~1.3 GB`` when the catalog only knows a rounded size."""
        return ("~" if self.size_approx else "") + human_size(self.size_bytes)


@dataclass(frozen=True)
class CatalogPair:
    id: str
    name: str
    family: str
    drafting: str
    license: str
    uses: tuple[str, ...]
    target: CatalogFile
    draft: CatalogFile | None
    kv_cache_gb: float
    context_tokens: int
    notes: str = ""
    projector: CatalogFile | None = None  # a vision target's mmproj, saved as mmproj-<target stem>.gguf

    @property
    def drafting_label(self) -> str:
        return DRAFTING_METHODS[self.drafting]

    @property
    def files(self) -> tuple[CatalogFile, ...]:
        """What downloading the pair fetches: the target, its draft, its projector."""
        return tuple(f for f in (self.target, self.draft, self.projector) if f is not None)

    @property
    def download_bytes(self) -> int:
        return sum(f.size_bytes for f in self.files)

    @property
    def size_approx(self) -> bool:
        return any(f.size_approx for f in self.files)

    @property
    def download_text(self) -> str:
        return ("~" if self.size_approx else "") + human_size(self.download_bytes)

    @property
    def ram_gb(self) -> float:
        """RAM or VRAM to run the pair at ``context_tokens``: both files, the KV cache, buffers."""
        return self.download_bytes / 1e9 + self.kv_cache_gb + RUNTIME_OVERHEAD_GB

    @property
    def ram_text(self) -> str:
        return f"~{self.ram_gb:.1f} GB @ {self.context_tokens // 1024}K ctx"

    @property
    def size_ratio(self) -> float | None:
        """How many times more parameters the target has than its draft model (None if unknown)."""
        if self.draft is None or not self.target.parameters_b or not self.draft.parameters_b:
            return None
        return self.target.parameters_b / self.draft.parameters_b


def _check_keys(where: str, table: dict[str, Any], spec: dict[str, Any], optional: set[str]) -> None:
    unknown = sorted(set(table) - set(spec))
    if unknown:
        raise CatalogError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(spec)})")
    for key, kind in spec.items():
        if key not in table:
            if key in optional:
                continue
            raise CatalogError(f"{where}: missing required key '{key}'")
        value = table[key]
        if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
            wanted = _KIND_NAMES.get(kind, "a number") if isinstance(kind, type) else "a number"
            raise CatalogError(f"{where}: '{key}' must be {wanted}, not {type(value).__name__}")


def _is_repo_id(repo: str) -> bool:
    try:
        check_repo_id(repo)
    except InvalidNameError:
        return False
    return True


def _check_repo_path(where: str, file: str) -> None:
    try:
        check_name(file, folders=True)
    except InvalidNameError as exc:
        raise CatalogError(f"{where}: file '{file}' must be a .gguf path inside the repo ({exc})") from None
    if not file.endswith(".gguf") or PurePosixPath(file).name == ".gguf":
        raise CatalogError(f"{where}: file '{file}' must be a .gguf path inside the repo")


def _parse_file(where: str, table: Any) -> CatalogFile:
    if not isinstance(table, dict):
        raise CatalogError(f"{where} must be a table")
    _check_keys(where, table, _FILE_KEYS, _FILE_OPTIONAL)
    repo, file = table["repo"], table["file"]
    if "/" not in repo or not _is_repo_id(repo):  # the catalog names owners: owner/name
        raise CatalogError(f"{where}: repo '{repo}' is not a Hugging Face repo id (owner/name)")
    _check_repo_path(where, file)
    if table["size_bytes"] <= 0:
        raise CatalogError(f"{where}: 'size_bytes' must be positive")
    for key in ("parameters_b", "active_parameters_b"):
        if key in table and table[key] <= 0:
            raise CatalogError(f"{where}: '{key}' must be positive")
    if "active_parameters_b" in table and table["active_parameters_b"] > table.get("parameters_b", float("inf")):
        raise CatalogError(f"{where}: 'active_parameters_b' must be at most 'parameters_b'")
    quantization = table.get("quantization", "")
    if quantization and quantization.lower() not in file.lower():
        raise CatalogError(f"{where}: quantization '{quantization}' does not appear in file '{file}'")
    source_re = rf"https://huggingface\.co/{re.escape(repo)}/(resolve|blob)/[^/]+/{re.escape(file)}"
    if not re.fullmatch(source_re, table["source"]):
        raise CatalogError(
            f"{where}: source '{table['source']}' must be the hub URL of {repo}/{file} "
            "(https://huggingface.co/REPO/resolve/REVISION/FILE)"
        )
    parameters, active = table.get("parameters_b"), table.get("active_parameters_b")
    return CatalogFile(
        repo=repo,
        file=file,
        size_bytes=table["size_bytes"],
        source=table["source"],
        quantization=quantization,
        parameters_b=float(parameters) if parameters is not None else None,
        size_approx=table.get("size_approx", False),
        active_parameters_b=float(active) if active is not None else None,
    )


def _parse_projector(where: str, table: Any, target: CatalogFile) -> CatalogFile:
    """A vision target's projector, named for the models folder after its target."""
    projector = _parse_file(f"{where} projector", table)
    if projector.size_bytes >= target.size_bytes:
        raise CatalogError(f"{where}: the projector file must be smaller than the target file")
    return replace(projector, saved_as=paired_projector_name(target.filename))


def _parse_pair(index: int, table: Any, context_tokens: int) -> CatalogPair:
    if not isinstance(table, dict):
        raise CatalogError(f"pair #{index + 1} must be a table")
    where = f"pair #{index + 1} ('{table.get('id', '?')}')"
    _check_keys(where, table, _PAIR_KEYS, _PAIR_OPTIONAL)
    if not _ID_RE.match(table["id"]):
        raise CatalogError(f"{where}: id must be lower-case letters, digits, '.' and '-'")
    uses = table["uses"]
    if not uses or not all(isinstance(u, str) for u in uses) or set(uses) - USES:
        raise CatalogError(f"{where}: 'uses' must be a non-empty list drawn from {', '.join(sorted(USES))}")
    drafting = table["drafting"]
    if drafting not in DRAFTING_METHODS:
        raise CatalogError(f"{where}: 'drafting' must be one of {', '.join(DRAFTING_METHODS)}, not '{drafting}'")
    notes = table["notes"].strip()
    if not notes or "\n" in notes:
        raise CatalogError(f"{where}: 'notes' must be one line saying when the pair pays")
    if table["kv_cache_gb"] < 0:
        raise CatalogError(f"{where}: 'kv_cache_gb' must not be negative")
    target = _parse_file(f"{where} target", table["target"])
    has_draft = "draft" in table
    if drafting in METHODS_WITH_DRAFT and not has_draft:
        raise CatalogError(f"{where}: drafting '{drafting}' needs a [pair.draft] file")
    if drafting not in METHODS_WITH_DRAFT and has_draft:
        raise CatalogError(f"{where}: drafting '{drafting}' uses no draft file; remove [pair.draft]")
    draft = _parse_file(f"{where} draft", table["draft"]) if has_draft else None
    projector = _parse_projector(where, table["projector"], target) if "projector" in table else None
    if draft is not None:
        if (draft.repo, draft.file) == (target.repo, target.file):
            raise CatalogError(f"{where}: the draft is the target file")
        if draft.size_bytes >= target.size_bytes:
            raise CatalogError(f"{where}: the draft file must be smaller than the target file")
    if drafting == DrafterKind.MODEL.value and draft is not None:
        if target.parameters_b is None or draft.parameters_b is None:
            raise CatalogError(f"{where}: a draft model pair needs 'parameters_b' on the target and the draft")
        if draft.parameters_b >= target.parameters_b:
            raise CatalogError(
                f"{where}: the draft ({draft.parameters_b}B) must be smaller than the target ({target.parameters_b}B)"
            )
    return CatalogPair(
        id=table["id"],
        name=table["name"],
        family=table["family"],
        drafting=drafting,
        license=table["license"],
        uses=tuple(uses),
        target=target,
        draft=draft,
        kv_cache_gb=float(table["kv_cache_gb"]),
        context_tokens=context_tokens,
        notes=notes,
        projector=projector,
    )


def parse_catalog(data: dict[str, Any]) -> list[CatalogPair]:
    """Validate parsed TOML; raise CatalogError naming the first bad entry."""
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise CatalogError(f"schema_version must be {SCHEMA_VERSION}, not {version!r}")
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise CatalogError(f"unknown top-level key(s): {', '.join(unknown)}")
    context_tokens = data.get("context_tokens")
    if isinstance(context_tokens, bool) or not isinstance(context_tokens, int) or context_tokens <= 0:
        raise CatalogError(f"context_tokens must be a positive integer, not {context_tokens!r}")
    tables = data.get("pair")
    if not isinstance(tables, list) or not tables:
        raise CatalogError("the catalog has no [[pair]] entries")
    pairs = [_parse_pair(i, t, context_tokens) for i, t in enumerate(tables)]
    seen: set[str] = set()
    for pair in pairs:
        if pair.id in seen:
            raise CatalogError(f"pair id '{pair.id}' appears twice")
        seen.add(pair.id)
    return pairs


def load_catalog(path: str | Path | None = None) -> list[CatalogPair]:
    """The pairs in ``path`` (default: the shipped ``models/catalog.toml``)."""
    path = Path(path) if path else DEFAULT_CATALOG
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CatalogError(f"model catalog not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{path.name} is not valid TOML: {exc}") from None
    try:
        return parse_catalog(data)
    except CatalogError as exc:
        raise CatalogError(f"{path.name}: {exc}") from None
