"""The n-gram cache learned from the user's chats, kept on disk next to the history.

The cache is a function of the history: it counts the n-grams of the messages listed in its
manifest (message id and a checksum of its text). :func:`sync` brings it in line with the
messages the history holds now: new messages are added; a message that was deleted or edited
makes it start over from the remaining messages, so deleted text never keeps steering drafts. A
missing, foreign (another vocabulary) or corrupt file is rebuilt. Llama-free: the caller passes
the messages and the tokenizer.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from desktop_app.engine.drafters.ngram_counts import NgramCounts

CACHE_VERSION = 1
HISTORY_ORDERS = (4, 3, 2)
MAX_ENTRIES = 200_000  # n-grams kept (about 10 MB on disk at most)
MAX_TOKENS = 400_000  # of the newest messages, when the history is larger


@dataclass(frozen=True)
class SourceMessage:
    id: int
    text: str

    @property
    def digest(self) -> int:
        return zlib.crc32(self.text.encode("utf-8", errors="replace"))


class CacheFileError(Exception):
    """The file cannot be used (missing, corrupt, another vocabulary or version): why."""


def save(path: Path, counts: NgramCounts, manifest: dict[int, int], vocab: str) -> None:
    """Write atomically (a crash leaves the old file or the new one, never half of one)."""
    keys = np.full((len(counts.table), max(counts.orders)), -1, dtype=np.int32)
    offsets = np.zeros(len(counts.table) + 1, dtype=np.int64)
    followers: list[int] = []
    weights: list[int] = []
    for i, (key, table) in enumerate(counts.table.items()):
        keys[i, : len(key)] = key
        followers.extend(table.keys())
        weights.extend(table.values())
        offsets[i + 1] = len(followers)
    meta = {"version": CACHE_VERSION, "vocab": vocab, "orders": list(counts.orders),
            "tokens_added": counts.tokens_added}
    ids = np.array(sorted(manifest), dtype=np.int64)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as handle:
        np.savez(handle, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), keys=keys, offsets=offsets,
                 followers=np.array(followers, dtype=np.int32), counts=np.array(weights, dtype=np.int32),
                 ids=ids, digests=np.array([manifest[i] for i in ids.tolist()], dtype=np.int64))
    os.replace(tmp, path)


def load(path: Path, vocab: str) -> tuple[NgramCounts, dict[int, int]]:
    """The counts and manifest in ``path``; CacheFileError when it cannot be trusted."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(data["meta"].tobytes().decode())
            keys, offsets = data["keys"], data["offsets"]
            followers, weights = data["followers"], data["counts"]
            ids, digests = data["ids"], data["digests"]
    except FileNotFoundError:
        raise CacheFileError("there is none yet") from None
    except Exception as exc:  # noqa: BLE001 - a damaged file may fail in any way numpy/zip/json has
        raise CacheFileError(f"it is damaged ({type(exc).__name__}: {exc})") from None
    if not isinstance(meta, dict) or meta.get("version") != CACHE_VERSION:
        raise CacheFileError("it was written by another version")
    if meta.get("vocab") != vocab:
        raise CacheFileError("it belongs to another model's vocabulary")
    orders = meta.get("orders")
    n = len(keys)
    if (not isinstance(orders, list) or keys.ndim != 2 or offsets.shape != (n + 1,) or len(followers) != len(weights)
            or (n and (offsets[0] != 0 or offsets[-1] != len(followers) or np.any(np.diff(offsets) <= 0)))
            or ids.shape != digests.shape):
        raise CacheFileError("it is damaged (inconsistent tables)")
    counts = NgramCounts(orders)
    counts.tokens_added = int(meta.get("tokens_added", 0))
    bounds = offsets.tolist()
    fol, wts = followers.tolist(), weights.tolist()
    for i, row in enumerate(keys.tolist()):
        key = tuple(t for t in row if t >= 0)
        counts.table[key] = dict(zip(fol[bounds[i]:bounds[i + 1]], wts[bounds[i]:bounds[i + 1]]))
    return counts, dict(zip(ids.tolist(), digests.tolist()))


def sync(path: Path, vocab: str, messages: Sequence[SourceMessage], tokenize: Callable[[str], list[int]],
         log: Callable[[str], None] = print) -> NgramCounts:
    """The cache for exactly ``messages`` (oldest first), from ``path`` where it can be, saved back."""
    wanted = {m.id: m.digest for m in messages}
    try:
        counts, manifest = load(path, vocab)
        stale = [i for i, digest in manifest.items() if wanted.get(i) != digest]
        if stale:
            log(f"n-gram cache: {len(stale)} message(s) it learned from were deleted or edited; rebuilding it")
            counts, manifest = NgramCounts(HISTORY_ORDERS), {}
    except CacheFileError as exc:
        if path.exists():
            log(f"n-gram cache {path.name}: {exc}; rebuilding it from the history")
        counts, manifest = NgramCounts(HISTORY_ORDERS), {}
    new = [m for m in messages if m.id not in manifest]
    budget = MAX_TOKENS
    changed = False
    for message in reversed(new):  # newest first, within the token budget
        tokens = tokenize(message.text)
        budget -= len(tokens)
        if budget < 0:
            break
        counts.add(tokens)
        manifest[message.id] = message.digest
        changed = True
    counts.prune(MAX_ENTRIES)
    if changed or not path.exists():
        save(path, counts, manifest, vocab)
    return counts
