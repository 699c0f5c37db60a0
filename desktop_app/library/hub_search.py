"""Searching the Hugging Face Hub (or ``HF_ENDPOINT``'s mirror) for GGUF repositories, and one
repository's GGUF files grouped by quantization: each with its size, whether it fits this
machine (:mod:`desktop_app.library.fit`) and its predicted speed here
(:mod:`desktop_app.library.speed`), and the one to pick by default.

A quantization is read from the file name (``…-Q4_K_M.gguf``, ``….Q8_0.gguf``, ``UD-Q4_K_XL``);
the parts of a split file (``…-00001-of-00003.gguf``) are one choice. The search is one request
with a timeout (huggingface_hub's ``list_models`` retries a dead network for ~20 s), so a
machine without a network learns so in seconds. No Qt.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from huggingface_hub import HfApi, ModelInfo
from huggingface_hub.utils import get_session, hf_raise_for_status

from desktop_app.library.catalog import RUNTIME_OVERHEAD_GB
from desktop_app.library.errors import DownloadError
from desktop_app.library.fit import COMFORT_SHARE, MachineMemory
from desktop_app.library.hub import describe_failure, hub_endpoint, hub_headers, is_offline
from desktop_app.library.names import check_repo_id
from desktop_app.library.speed import FAST_ENOUGH_TOKENS_S, SpeedGuess
from desktop_app.library.units import human_size

SEARCH_LIMIT = 50
SEARCH_TIMEOUT_S = 10.0
KV_SHARE = 0.1  # the KV cache and context at a few thousand tokens: about a tenth of the weights
NO_CONNECTION = "No internet connection: searching Hugging Face needs one; models on disk and the catalog still work."
SWITCHED_OFF = (
    "Hugging Face is switched off on this computer (HF_HUB_OFFLINE is set); models on disk and the catalog still work."
)
_SPLIT = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$", re.IGNORECASE)
_QUANT = re.compile(
    r"(?<![A-Z0-9])((?:UD-)?(?:I?Q\d(?:_(?:[0-9]|K|XXS|XS|S|M|L|XL|NL))*|TQ\d_\d|MXFP4(?:_MOE)?|BF16|F16|F32))"
    r"(?![A-Z0-9])"
)
_MOE = re.compile(r"(\d+(?:\.\d+)?)B-A(\d+(?:\.\d+)?)B", re.IGNORECASE)  # Qwen3-30B-A3B: 3 of 30 billion


class HubSearchError(DownloadError):
    """The hub could not be searched or a repository listed; ``plain`` says so in one line."""


@dataclass(frozen=True)
class HubRepo:
    """One search result."""

    repo_id: str
    downloads: int = 0
    likes: int = 0
    updated: datetime | None = None

    @property
    def updated_text(self) -> str:
        return self.updated.strftime("%Y-%m-%d") if self.updated else "-"


@dataclass(frozen=True)
class GgufChoice:
    """One quantization of a repository: its file, or the parts of a split file, in order."""

    quantization: str
    files: tuple[str, ...]
    size_bytes: int | None
    active_share: float = 1.0  # a mixture of experts reads this share of its weights per token

    @property
    def size_text(self) -> str:
        return human_size(self.size_bytes) if self.size_bytes is not None else "?"

    @property
    def files_text(self) -> str:
        first = self.files[0].rsplit("/", 1)[-1]
        return first if len(self.files) == 1 else f"{first} (+{len(self.files) - 1} parts)"

    @property
    def ram_gb(self) -> float:
        """RAM or VRAM to run it: the file, its KV cache (:data:`KV_SHARE`), buffers."""
        return (self.size_bytes or 0) / 1e9 * (1 + KV_SHARE) + RUNTIME_OVERHEAD_GB

    def tokens_per_s(self, speed: SpeedGuess) -> float:
        return speed.tokens_per_s(round((self.size_bytes or 0) * self.active_share))

    def fits(self, memory: MachineMemory, share: float = 1.0) -> bool:
        return self.size_bytes is not None and self.ram_gb <= memory.usable_gb * share

    def fit_text(self, memory: MachineMemory) -> str:
        """What the "This machine" column says, in fit.py's words."""
        if self.size_bytes is None:
            return "size unknown"
        if self.fits(memory):
            return f"fits: needs ~{self.ram_gb:.1f} GB of {memory.describe()}"
        return f"needs ~{self.ram_gb:.1f} GB, this machine has {memory.describe()}"


def quantization_of(filename: str) -> str | None:
    """``Q4_K_M`` from ``Qwen2.5-7B-Instruct-Q4_K_M.gguf`` (the last match in the name); None if none."""
    stem = _SPLIT.sub("", filename.rsplit("/", 1)[-1])
    stem = re.sub(r"\.gguf$", "", stem, flags=re.IGNORECASE).upper()
    found = _QUANT.findall(re.sub(r"(?<![A-Z0-9])FP(16|32)(?![A-Z0-9])", r"F\1", stem))  # Qwen's "fp16"
    return found[-1] if found else None


def group_gguf_files(files: Iterable[tuple[str, int | None]], repo_id: str = "") -> list[GgufChoice]:
    """The repository's GGUF model files as choices, smallest first: one per file, the parts of a
    split file together (their sizes summed). Vision projectors (``mmproj``) are left out."""
    groups: dict[str, list[tuple[str, int | None]]] = {}
    for name, size in files:
        base = name.rsplit("/", 1)[-1].lower()
        if not base.endswith(".gguf") or base.startswith("mmproj") or "-mmproj" in base:
            continue
        key = _SPLIT.sub(".gguf", name)
        groups.setdefault(key, []).append((name, size))
    moe = _MOE.search(repo_id)
    share = min(1.0, float(moe[2]) / float(moe[1])) if moe and float(moe[1]) > 0 else 1.0
    choices = []
    for key, parts in groups.items():
        parts.sort()
        sizes = [s for _, s in parts]
        total = None if any(s is None for s in sizes) else sum(s for s in sizes if s is not None)
        label = quantization_of(key) or key.rsplit("/", 1)[-1].removesuffix(".gguf")
        choices.append(GgufChoice(label, tuple(n for n, _ in parts), total, share))
    return sorted(choices, key=lambda c: (c.size_bytes is None, c.size_bytes or 0, c.quantization))


def default_choice(choices: Sequence[GgufChoice], memory: MachineMemory, speed: SpeedGuess) -> GgufChoice | None:
    """The one to select: the largest that fits with room to spare (fit.py's COMFORT_SHARE) and
    is predicted fast enough (speed.py's FAST_ENOUGH_TOKENS_S); else the fastest that fits so;
    else the smallest that fits at all; None when none fits."""
    roomy = [c for c in choices if c.fits(memory, COMFORT_SHARE)]
    fast = [c for c in roomy if c.tokens_per_s(speed) >= FAST_ENOUGH_TOKENS_S]
    if fast:
        return max(fast, key=lambda c: c.size_bytes or 0)
    if roomy:
        return max(roomy, key=lambda c: c.tokens_per_s(speed))
    return min((c for c in choices if c.fits(memory)), key=lambda c: c.size_bytes or 0, default=None)


def _failure(exc: BaseException, what: str, endpoint: str, timeout: float) -> HubSearchError:
    if is_offline():
        return HubSearchError(f"HF_HUB_OFFLINE is set, so {what} is not possible", plain=SWITCHED_OFF)
    described = describe_failure(exc, what, "", "main", endpoint, timeout)
    plain = described.plain
    if plain.startswith("No internet connection") or "did not answer" in plain:
        plain = NO_CONNECTION
    elif plain.startswith("Hugging Face answered"):
        plain = plain.split(":", 1)[0] + f": {what} failed."
    return HubSearchError(str(described), plain=plain)


def search_gguf(
    text: str,
    endpoint: str | None = None,
    token: str | None = None,
    limit: int = SEARCH_LIMIT,
    timeout: float = SEARCH_TIMEOUT_S,
) -> list[HubRepo]:
    """The hub's GGUF repositories matching ``text``, most downloaded first (HubSearchError if
    the hub cannot be reached or refuses)."""
    base = hub_endpoint(endpoint)
    what = f"searching Hugging Face for {text!r}"
    params: dict[str, str | int] = {"filter": "gguf", "sort": "downloads", "direction": -1, "limit": limit}
    if text.strip():
        params["search"] = text.strip()
    try:
        if is_offline():
            raise OSError("offline")
        response = get_session().get(f"{base}/api/models", params=params, headers=hub_headers(token), timeout=timeout)
        hf_raise_for_status(response)
        infos = [ModelInfo(**{"siblings": None, **item}) for item in response.json()]
    except Exception as exc:  # noqa: BLE001 - any hub/network failure becomes one plain line
        raise _failure(exc, what, base, timeout) from None
    return [HubRepo(i.id, i.downloads or 0, i.likes or 0, i.last_modified) for i in infos[:limit]]


def repo_choices(
    repo_id: str, endpoint: str | None = None, token: str | None = None, timeout: float = SEARCH_TIMEOUT_S
) -> list[GgufChoice]:
    """The repository's GGUF files grouped by quantization, with their sizes (HubSearchError if
    the hub cannot be reached or has no such repository)."""
    check_repo_id(repo_id)
    base = hub_endpoint(endpoint)
    try:
        if is_offline():
            raise OSError("offline")
        info = HfApi(endpoint=base, token=token).model_info(repo_id, files_metadata=True, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - any hub/network failure becomes one plain line
        raise _failure(exc, f"listing the files of {repo_id}", base, timeout) from None
    files = [(s.rfilename, s.lfs.size if s.lfs else s.size) for s in info.siblings or []]
    return group_gguf_files(files, repo_id)
