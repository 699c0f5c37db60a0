"""The curated draft/target pairs in ``models/catalog.toml``, loaded and checked against a schema.

Every pair names a target and a draft that share a tokenizer, with Hugging Face repo ids and file
names, so ``specchat models pull REPO FILE`` can fetch either. A bad entry raises
:class:`CatalogError` naming the entry and the field.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from desktop_app.library.errors import CatalogError

DEFAULT_CATALOG = Path(__file__).resolve().parents[2] / "models" / "catalog.toml"
SCHEMA_VERSION = 1
USES = frozenset({"chat", "code", "multilingual", "korean", "reasoning"})
_REPO_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
_PAIR_KEYS = {"id": str, "name": str, "family": str, "license": str, "uses": list, "notes": str, "target": dict, "draft": dict}
_PAIR_OPTIONAL = {"notes"}
_FILE_KEYS = {"repo": str, "file": str, "quantization": str, "size_gb": (int, float), "parameters_b": (int, float)}


@dataclass(frozen=True)
class CatalogFile:
    """One GGUF file on the hub."""

    repo: str
    file: str
    quantization: str
    size_gb: float
    parameters_b: float


@dataclass(frozen=True)
class CatalogPair:
    id: str
    name: str
    family: str
    license: str
    uses: tuple[str, ...]
    target: CatalogFile
    draft: CatalogFile
    notes: str = ""

    @property
    def size_ratio(self) -> float:
        """How many times more parameters the target has than the draft."""
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
        if isinstance(value, bool) or not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else "number"
            raise CatalogError(f"{where}: '{key}' must be a {names}, not {type(value).__name__}")


def _parse_file(where: str, table: Any) -> CatalogFile:
    if not isinstance(table, dict):
        raise CatalogError(f"{where} must be a table")
    _check_keys(where, table, _FILE_KEYS, set())
    if not _REPO_RE.match(table["repo"]):
        raise CatalogError(f"{where}: repo '{table['repo']}' is not a Hugging Face repo id (owner/name)")
    if not table["file"].endswith(".gguf") or "/" in table["file"]:
        raise CatalogError(f"{where}: file '{table['file']}' must be a .gguf file name")
    for key in ("size_gb", "parameters_b"):
        if table[key] <= 0:
            raise CatalogError(f"{where}: '{key}' must be positive")
    return CatalogFile(table["repo"], table["file"], table["quantization"], float(table["size_gb"]), float(table["parameters_b"]))


def _parse_pair(index: int, table: Any) -> CatalogPair:
    if not isinstance(table, dict):
        raise CatalogError(f"pair #{index + 1} must be a table")
    where = f"pair #{index + 1} ('{table.get('id', '?')}')"
    _check_keys(where, table, _PAIR_KEYS, _PAIR_OPTIONAL)
    if not _ID_RE.match(table["id"]):
        raise CatalogError(f"{where}: id must be lower-case letters, digits, '.' and '-'")
    uses = table["uses"]
    if not uses or not all(isinstance(u, str) for u in uses) or set(uses) - USES:
        raise CatalogError(f"{where}: 'uses' must be a non-empty list drawn from {', '.join(sorted(USES))}")
    target = _parse_file(f"{where} target", table["target"])
    draft = _parse_file(f"{where} draft", table["draft"])
    if draft.parameters_b >= target.parameters_b:
        raise CatalogError(f"{where}: the draft ({draft.parameters_b}B) must be smaller than the target ({target.parameters_b}B)")
    return CatalogPair(
        id=table["id"], name=table["name"], family=table["family"], license=table["license"],
        uses=tuple(uses), target=target, draft=draft, notes=table.get("notes", ""),
    )


def parse_catalog(data: dict[str, Any]) -> list[CatalogPair]:
    """Validate parsed TOML; raise CatalogError naming the first bad entry."""
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise CatalogError(f"schema_version must be {SCHEMA_VERSION}, not {version!r}")
    unknown = sorted(set(data) - {"schema_version", "pair"})
    if unknown:
        raise CatalogError(f"unknown top-level key(s): {', '.join(unknown)}")
    tables = data.get("pair")
    if not isinstance(tables, list) or not tables:
        raise CatalogError("the catalog has no [[pair]] entries")
    pairs = [_parse_pair(i, t) for i, t in enumerate(tables)]
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
