"""The n-gram cache learned from the user's chats, kept on disk next to the history.

The cache is a function of the history: it counts the n-grams of the messages listed in its
manifest (message id and a checksum of its text). :func:`sync` brings it in line with the
messages the history holds now: new messages are added; a message that was deleted or edited
makes it start over from the remaining messages, so deleted text never keeps steering drafts. A
missing, foreign (another vocabulary) or corrupt file is rebuilt. Llama-free: the caller passes
the messages and the tokenizer.

Bounds: a (re)build reads the newest messages up to MAX_TOKENS tokens (older ones are left out
for good: later syncs only add messages newer than the newest learned); the table keeps the
MAX_ENTRIES n-grams seen most often (pruned to PRUNED_ENTRIES when it grows past that, so a
full cache is not re-ranked at every sync), which bounds the file to about 10 MB.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from desktop_app.engine.drafters.ngram_counts import NgramCounts

CACHE_VERSION = 1
HISTORY_ORDERS = (4, 3, 2)
MAX_ENTRIES = 200_000  # n-grams kept (about 10 MB on disk at most)
PRUNED_ENTRIES = 180_000  # what a table past MAX_ENTRIES is cut back to
MAX_TOKENS = 400_000  # of the newest messages, when the history is larger

Stamp = tuple[int, int]  # a file's (mtime_ns, size)


@dataclass(frozen=True)
class SourceMessage:
    id: int
    text: str

    @property
    def digest(self) -> int:
        return zlib.crc32(self.text.encode("utf-8", errors="replace"))


@dataclass(frozen=True)
class CacheState:
    """What :func:`sync` made: the counts (never changed afterwards: the engine reads them while
    drafting), the manifest they were learned from, and the file they were saved as."""

    counts: NgramCounts
    manifest: Mapping[int, int]
    stamp: Stamp | None


class CacheFileError(Exception):
    """The file cannot be used (missing, corrupt, another vocabulary or version): why."""


def _stamp(path: Path) -> Stamp | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def _copy(counts: NgramCounts) -> NgramCounts:
    twin = NgramCounts(counts.orders)
    twin.table = {key: dict(followers) for key, followers in counts.table.items()}
    twin.tokens_added = counts.tokens_added
    return twin


def save(path: Path, counts: NgramCounts, manifest: Mapping[int, int], vocab: str) -> None:
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
    try:
        with tmp.open("wb") as handle:
            np.savez(handle, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), keys=keys,
                     offsets=offsets, followers=np.array(followers, dtype=np.int32),
                     counts=np.array(weights, dtype=np.int32), ids=ids,
                     digests=np.array([manifest[i] for i in ids.tolist()], dtype=np.int64))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # only left when writing failed (a full disk)


def load(path: Path, vocab: str, n_vocab: int | None = None) -> tuple[NgramCounts, dict[int, int]]:
    """The counts and manifest in ``path``; CacheFileError when it cannot be trusted (tokens
    are checked to be below ``n_vocab`` when given: a draft of a token the model lacks fails)."""
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
    tokens_added = meta.get("tokens_added", 0)
    n = keys.shape[0] if keys.ndim == 2 else -1
    integral = all(a.dtype.kind in "iu" for a in (keys, offsets, followers, weights, ids, digests))
    if (orders != list(HISTORY_ORDERS) or not isinstance(tokens_added, int) or not integral
            or keys.ndim != 2 or keys.shape[1] != max(HISTORY_ORDERS) or offsets.shape != (n + 1,)
            or followers.ndim != 1 or followers.shape != weights.shape or ids.ndim != 1 or ids.shape != digests.shape
            or offsets[0] != 0 or offsets[-1] != len(followers) or np.any(np.diff(offsets) <= 0)
            or np.any(weights <= 0) or np.any(followers < 0) or np.any(keys < -1)
            or (n_vocab is not None and (np.any(followers >= n_vocab) or np.any(keys >= n_vocab)))):
        raise CacheFileError("it is damaged (inconsistent tables)")
    used = keys >= 0  # each row: an n-gram of 2 to 4 tokens, then -1 padding
    padded_right = used == (np.arange(keys.shape[1]) < used.sum(axis=1)[:, None])
    if np.any(~used[:, : min(HISTORY_ORDERS)]) or not np.all(padded_right):
        raise CacheFileError("it is damaged (malformed n-grams)")
    counts = NgramCounts(HISTORY_ORDERS)
    counts.tokens_added = tokens_added
    bounds = offsets.tolist()
    fol, wts = followers.tolist(), weights.tolist()
    for i, row in enumerate(keys.tolist()):
        key = tuple(t for t in row if t >= 0)
        counts.table[key] = dict(zip(fol[bounds[i]:bounds[i + 1]], wts[bounds[i]:bounds[i + 1]]))
    return counts, dict(zip(ids.tolist(), digests.tolist()))


def sync(path: Path, vocab: str, messages: Sequence[SourceMessage], tokenize: Callable[[str], list[int]],
         log: Callable[[str], None] = print, n_vocab: int | None = None, known: CacheState | None = None,
         ) -> CacheState:
    """The cache for exactly ``messages`` (oldest first), from ``path`` where it can be, saved back.

    ``known`` is what the last sync returned: while the file is still the one it saved, it is
    used instead of reading the file again (and returned as is when nothing changed). A file
    that cannot be written is said in ``log``; the cache is still returned.
    """
    wanted = {m.id: m.digest for m in messages}
    rebuilt = False
    try:
        if known is not None and known.stamp is not None and known.stamp == _stamp(path):
            counts, manifest = known.counts, dict(known.manifest)
        else:
            known = None
            counts, manifest = load(path, vocab, n_vocab)
        stale = [i for i, digest in manifest.items() if wanted.get(i) != digest]
        if stale:
            log(f"n-gram cache: {len(stale)} message(s) it learned from were deleted or edited; rebuilding it")
            counts, manifest, rebuilt = NgramCounts(HISTORY_ORDERS), {}, True
    except CacheFileError as exc:
        if path.exists():
            log(f"n-gram cache {path.name}: {exc}; rebuilding it from the history")
        counts, manifest, rebuilt = NgramCounts(HISTORY_ORDERS), {}, True
    # Only messages newer than the newest learned: older ones missing from the manifest were
    # left out by the token budget of the build (and stay out, so a sync costs what is new).
    learned = [i for i, m in enumerate(messages) if m.id in manifest]
    new = messages[learned[-1] + 1:] if learned else messages
    if not new and not rebuilt:
        return known or CacheState(counts, manifest, _stamp(path))  # the file is right as it is
    if known is not None and counts is known.counts:
        counts = _copy(counts)  # the engine may be drafting from the known one
    budget = MAX_TOKENS
    for message in reversed(new):  # newest first, within the token budget
        tokens = tokenize(message.text)
        budget -= len(tokens)
        if budget < 0:
            break
        counts.add(tokens)
        manifest[message.id] = message.digest
    if len(counts) > MAX_ENTRIES:
        counts.prune(PRUNED_ENTRIES)
    try:
        save(path, counts, manifest, vocab)
    except OSError as exc:
        log(f"n-gram cache {path.name}: cannot be saved ({exc}); it is rebuilt at the next start")
        try:
            path.unlink(missing_ok=True)  # the old file may hold deleted text
        except OSError:
            pass
        return CacheState(counts, manifest, None)
    return CacheState(counts, manifest, _stamp(path))
