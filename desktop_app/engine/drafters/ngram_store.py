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
full cache is not re-ranked at every sync), which bounds the file to about 10 MB. Loading checks
each array's zip entry and .npy header against ARRAY_LIMITS before reading it.
"""

from __future__ import annotations

import json
import math
import os
import struct
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.lib import format as npy_format

from desktop_app.engine.drafters.ngram_counts import NgramCounts

CACHE_VERSION = 1
HISTORY_ORDERS = (4, 3, 2)
MAX_ENTRIES = 200_000  # n-grams kept (about 10 MB on disk at most)
PRUNED_ENTRIES = 180_000  # what a table past MAX_ENTRIES is cut back to
MAX_TOKENS = 400_000  # of the newest messages, when the history is larger
# What a file may hold, checked before reading it: followers of a build are at most one per
# order per token (3 x MAX_TOKENS), twice that leaves room for the syncs after it (a file past
# it is rebuilt); two million messages is far past any real history.
MAX_FOLLOWERS = 2 * len(HISTORY_ORDERS) * MAX_TOKENS
MAX_MESSAGES = 2_000_000
MAX_META_BYTES = 65_536  # a short JSON object
MAX_NPY_HEADER = 10_000  # numpy's own default bound on a .npy header
# name: (dtype, columns (0: one-dimensional), most rows)
ARRAY_LIMITS: dict[str, tuple[np.dtype, int, int]] = {
    "meta": (np.dtype(np.uint8), 0, MAX_META_BYTES),
    "keys": (np.dtype(np.int32), max(HISTORY_ORDERS), MAX_ENTRIES),
    "offsets": (np.dtype(np.int64), 0, MAX_ENTRIES + 1),
    "followers": (np.dtype(np.int32), 0, MAX_FOLLOWERS),
    "counts": (np.dtype(np.int32), 0, MAX_FOLLOWERS),
    "ids": (np.dtype(np.int64), 0, MAX_MESSAGES),
    "digests": (np.dtype(np.int64), 0, MAX_MESSAGES),
}
MAX_FILE_BYTES = sum(d.itemsize * max(c, 1) * r + MAX_NPY_HEADER + 1024 for d, c, r in ARRAY_LIMITS.values())

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
    meta = {
        "version": CACHE_VERSION,
        "vocab": vocab,
        "orders": list(counts.orders),
        "tokens_added": counts.tokens_added,
    }
    ids = np.array(sorted(manifest), dtype=np.int64)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("wb") as handle:
            np.savez(
                handle,
                meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                keys=keys,
                offsets=offsets,
                followers=np.array(followers, dtype=np.int32),
                counts=np.array(weights, dtype=np.int32),
                ids=ids,
                digests=np.array([manifest[i] for i in ids.tolist()], dtype=np.int64),
            )
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # only left when writing failed (a full disk)


def _read_arrays(path: Path) -> dict[str, np.ndarray]:
    """The arrays of ``path``, each read only after its zip entry and .npy header are found
    within :data:`ARRAY_LIMITS` (shape, dtype, size): a small file that inflates to gigabytes
    (a zip bomb) is refused before any of it is inflated. Raises what a damaged file raises."""
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"{path.stat().st_size} bytes, more than a cache can hold")
    arrays: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(path) as archive:
        for name, (dtype, columns, max_rows) in ARRAY_LIMITS.items():
            entry = archive.getinfo(name + ".npy")  # KeyError when missing
            max_bytes = max_rows * max(columns, 1) * dtype.itemsize
            if entry.file_size > max_bytes + MAX_NPY_HEADER:
                raise ValueError(f"{name} inflates to {entry.file_size} bytes, more than {max_bytes}")
            with archive.open(entry) as member:
                version = npy_format.read_magic(member)
                if version == (1, 0):
                    shape, fortran, found = npy_format.read_array_header_1_0(member, MAX_NPY_HEADER)
                elif version == (2, 0):
                    shape, fortran, found = npy_format.read_array_header_2_0(member, MAX_NPY_HEADER)
                else:
                    raise ValueError(f"{name} has .npy format version {version}")
                if found.kind != dtype.kind or found.itemsize != dtype.itemsize or fortran:
                    raise ValueError(f"{name} holds {found}, not {dtype}")
                if len(shape) != (2 if columns else 1) or (columns and shape[1] != columns) or shape[0] > max_rows:
                    raise ValueError(f"{name} has shape {shape}")
                size = math.prod(shape) * found.itemsize
                data = member.read(size)
                if len(data) != size:
                    raise ValueError(f"{name} is cut short")
                arrays[name] = np.frombuffer(data, dtype=found).reshape(shape)
    return arrays


def load(path: Path, vocab: str, n_vocab: int | None = None) -> tuple[NgramCounts, dict[int, int]]:
    """The counts and manifest in ``path``; CacheFileError when it cannot be trusted (tokens
    are checked to be below ``n_vocab`` when given: a draft of a token the model lacks fails)."""
    try:
        arrays = _read_arrays(path)
        meta = json.loads(arrays["meta"].tobytes().decode())
    except FileNotFoundError:
        raise CacheFileError("there is none yet") from None
    # What reading a damaged file raises: zipfile (BadZipFile, EOFError for a cut deflate
    # stream, NotImplementedError for another compression, RuntimeError when encrypted,
    # struct.error in odd headers), zlib.error while inflating, the .npy header parser
    # (ValueError; TypeError from a header such as {[]: 1}), json (ValueError, RecursionError:
    # a RuntimeError) and the disk (OSError).
    except (
        zipfile.BadZipFile,
        KeyError,
        EOFError,
        NotImplementedError,
        RuntimeError,
        struct.error,
        zlib.error,
        ValueError,
        TypeError,
        OSError,
    ) as exc:
        raise CacheFileError(f"it is damaged ({type(exc).__name__}: {exc})") from None
    keys, offsets = arrays["keys"], arrays["offsets"]
    followers, weights = arrays["followers"], arrays["counts"]
    ids, digests = arrays["ids"], arrays["digests"]
    if not isinstance(meta, dict) or meta.get("version") != CACHE_VERSION:
        raise CacheFileError("it was written by another version")
    if meta.get("vocab") != vocab:
        raise CacheFileError("it belongs to another model's vocabulary")
    orders = meta.get("orders")
    tokens_added = meta.get("tokens_added", 0)
    n = keys.shape[0] if keys.ndim == 2 else -1
    integral = all(a.dtype.kind in "iu" for a in (keys, offsets, followers, weights, ids, digests))
    if (
        orders != list(HISTORY_ORDERS)
        or not isinstance(tokens_added, int)
        or not integral
        or keys.ndim != 2
        or keys.shape[1] != max(HISTORY_ORDERS)
        or offsets.shape != (n + 1,)
        or followers.ndim != 1
        or followers.shape != weights.shape
        or ids.ndim != 1
        or ids.shape != digests.shape
        or offsets[0] != 0
        or offsets[-1] != len(followers)
        or np.any(np.diff(offsets) <= 0)
        or np.any(weights <= 0)
        or np.any(followers < 0)
        or np.any(keys < -1)
        or (n_vocab is not None and (np.any(followers >= n_vocab) or np.any(keys >= n_vocab)))
    ):
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
        counts.table[key] = dict(zip(fol[bounds[i] : bounds[i + 1]], wts[bounds[i] : bounds[i + 1]]))
    return counts, dict(zip(ids.tolist(), digests.tolist()))


def sync(
    path: Path,
    vocab: str,
    messages: Sequence[SourceMessage],
    tokenize: Callable[[str], list[int]],
    log: Callable[[str], None] = print,
    n_vocab: int | None = None,
    known: CacheState | None = None,
    max_tokens: int = MAX_TOKENS,
) -> CacheState:
    """The cache for exactly ``messages`` (oldest first), from ``path`` where it can be, saved back.

    ``known`` is what the last sync returned: while the file is still the one it saved, it is
    used instead of reading the file again (and returned as is when nothing changed). A file
    that cannot be written is said in ``log``; the cache is still returned. A (re)build reads the
    newest messages up to ``max_tokens`` tokens.
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
    new = messages[learned[-1] + 1 :] if learned else messages
    if not new and not rebuilt:
        return known or CacheState(counts, manifest, _stamp(path))  # the file is right as it is
    if known is not None and counts is known.counts:
        counts = _copy(counts)  # the engine may be drafting from the known one
    budget = max_tokens
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
