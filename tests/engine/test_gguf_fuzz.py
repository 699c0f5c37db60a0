"""500 random and mutated GGUF files: every one is a clear error (or a usable model), none
crashes, hangs or takes unbounded memory, in the header reader, the library scanner and the loader."""

from __future__ import annotations

import random
import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

from desktop_app.engine.errors import EngineError
from desktop_app.engine.llama.gguf_file import read_gguf
from desktop_app.library.local import describe, scan_models

N_CASES = 500
MAX_PEAK_BYTES = 64 * 2**20


def _kv(key: str, type_id: int, payload: bytes) -> bytes:
    raw = key.encode()
    return struct.pack("<Q", len(raw)) + raw + struct.pack("<I", type_id) + payload


def _synthetic(rng: random.Random) -> bytes:
    """A header built from scratch with hostile fields: huge lengths and counts, wrong types, deep nesting."""
    kvs = []
    for _ in range(rng.randint(0, 6)):
        choice = rng.randrange(7)
        if choice == 0:  # a string claiming to be enormous
            kvs.append(_kv("general.name", 8, struct.pack("<Q", rng.choice([2**63, 2**40, 10**9]))))
        elif choice == 1:  # an array of u32 claiming 2^60 items
            kvs.append(_kv("a.list", 9, struct.pack("<IQ", 4, rng.choice([2**60, 2**33]))))
        elif choice == 2:  # an unknown type id
            kvs.append(_kv("x", rng.randint(13, 2**32 - 1), b"\\0" * 8))
        elif choice == 3:  # arrays nested thousands deep
            kvs.append(_kv("deep", 9, struct.pack("<IQ", 9, 1) * rng.randint(100, 5000)))
        elif choice == 4:  # a key that is not UTF-8 and a value of the wrong type
            kvs.append(_kv("llama.context_length", 8, struct.pack("<Q", 3) + b"\\xff\\xfe\\x00"))
        elif choice == 5:
            kvs.append(_kv("general.alignment", rng.choice([4, 6, 8]), struct.pack("<q", rng.choice([0, -1, 2**40]))))
        else:
            kvs.append(_kv("general.architecture", 8, struct.pack("<Q", 5) + b"llama"))
    n_tensors = rng.choice([0, 1, 3, 2**40])
    body = b"".join(kvs)
    tensors = b""
    if n_tensors < 100:
        for i in range(n_tensors):
            name = f"t{i}".encode()
            dims = rng.choice([1, 2, 2**31])
            tensors += struct.pack("<Q", len(name)) + name + struct.pack("<I", dims)
            tensors += struct.pack("<Q", rng.choice([1, 2**62])) * min(dims, 4)
            tensors += struct.pack("<IQ", rng.choice([0, 1, 2, 99]), rng.choice([0, 2**62]))
    header = b"GGUF" + struct.pack("<IQQ", rng.choice([2, 3, 4]), n_tensors, rng.choice([len(kvs), 2**50]))
    return header + body + tensors


def _mutated(rng: random.Random, seed_file: bytes) -> bytes:
    data = bytearray(seed_file[: rng.choice([64, 512, 4096, 65536, len(seed_file)])])
    for _ in range(rng.randint(1, 12)):
        pos = rng.randrange(4, min(len(data), 20000))
        if rng.random() < 0.5:
            data[pos] = rng.randrange(256)
        else:  # a length or count field: make it huge
            data[pos : pos + 8] = struct.pack("<Q", rng.choice([2**63 - 1, 2**40, 0xFFFFFFFF]))
    return bytes(data)


def _cases(tmp_path: Path, seed_file: Path) -> list[Path]:
    rng = random.Random(20261130)
    original = seed_file.read_bytes()
    paths = []
    for i in range(N_CASES):
        data = _synthetic(rng) if i % 2 else _mutated(rng, original)
        path = tmp_path / f"case-{i:03}.gguf"
        path.write_bytes(data)
        paths.append(path)
    return paths


def test_every_broken_header_is_a_clear_error_in_bounded_memory(tmp_path: Path, models: Any) -> None:
    paths = _cases(tmp_path, models.target)
    tracemalloc.start()
    usable = []
    for path in paths:
        try:
            read_gguf(path)
            usable.append(path)
        except EngineError as exc:
            assert str(exc) and "\n" not in str(exc)
        entry = describe(path)  # the library scanner never raises: it reports
        assert entry.error or entry.usable
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < MAX_PEAK_BYTES, f"peak {peak / 2**20:.0f} MiB"
    assert len(scan_models([tmp_path])) == N_CASES
    assert len(usable) < N_CASES // 10  # nearly all were caught by the header check


def test_the_loader_survives_the_files_the_header_check_lets_through(tmp_path: Path, models: Any) -> None:
    # llama.cpp parses what our reader accepted: run it in a child process so a crash would
    # show as a failure here instead of killing the suite.
    paths = _cases(tmp_path, models.target)
    script = (
        "import sys\n"
        "from desktop_app.engine.errors import EngineError\n"
        "from desktop_app.engine.llama.model import LlamaModel\n"
        "from desktop_app.engine.api import ModelOptions\n"
        "ok = bad = 0\n"
        "for p in sys.argv[1:]:\n"
        "    try:\n"
        "        LlamaModel(p, ModelOptions(n_ctx=64)).close(); ok += 1\n"
        "    except EngineError as exc:\n"
        "        assert str(exc); bad += 1\n"
        "print(ok, bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", script, *map(str, paths)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    ok, bad = map(int, out.stdout.split())
    assert ok + bad == N_CASES
    print(f"loader: {ok} loaded, {bad} refused with a message")
