"""Read a GGUF file's header, metadata and tensor table without loading weights.

Used to reject bad files with a clear message before llama.cpp sees them (not GGUF, truncated),
and to describe local models (architecture, size, quantization, context length). Pure Python,
no third-party dependency.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop_app.engine.errors import ModelLoadError, ModelNotFoundError

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32
MAX_ARRAY_DEPTH = 8  # real files nest arrays at most twice

# value type id -> struct format for scalars
_SCALARS: dict[int, str] = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9

# ggml tensor type id -> (elements per block, bytes per block); matches ggml's type traits.
GGML_TYPE_SIZES: dict[int, tuple[int, int]] = {
    0: (1, 4),
    1: (1, 2),
    2: (32, 18),
    3: (32, 20),
    6: (32, 22),
    7: (32, 24),
    8: (32, 34),
    9: (32, 40),
    10: (256, 84),
    11: (256, 110),
    12: (256, 144),
    13: (256, 176),
    14: (256, 210),
    15: (256, 292),
    16: (256, 66),
    17: (256, 74),
    18: (256, 98),
    19: (256, 50),
    20: (32, 18),
    21: (256, 110),
    22: (256, 82),
    23: (256, 136),
    24: (1, 1),
    25: (1, 2),
    26: (1, 4),
    27: (1, 8),
    28: (1, 8),
    29: (256, 56),
    30: (1, 2),
    34: (256, 54),
    35: (256, 66),
    39: (32, 17),
    40: (64, 36),
    41: (128, 18),
}

GGML_TYPE_NAMES: dict[int, str] = {
    0: "F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    6: "Q5_0",
    7: "Q5_1",
    8: "Q8_0",
    9: "Q8_1",
    10: "Q2_K",
    11: "Q3_K",
    12: "Q4_K",
    13: "Q5_K",
    14: "Q6_K",
    15: "Q8_K",
    16: "IQ2_XXS",
    17: "IQ2_XS",
    18: "IQ3_XXS",
    19: "IQ1_S",
    20: "IQ4_NL",
    21: "IQ3_S",
    22: "IQ2_S",
    23: "IQ4_XS",
    24: "I8",
    25: "I16",
    26: "I32",
    27: "I64",
    28: "F64",
    29: "IQ1_M",
    30: "BF16",
    34: "TQ1_0",
    35: "TQ2_0",
    39: "MXFP4",
    40: "NVFP4",
    41: "Q1_0",
}


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    type_id: int
    offset: int

    @property
    def n_elements(self) -> int:
        n = 1
        for dim in self.shape:
            n *= dim
        return n

    @property
    def n_bytes(self) -> int | None:
        sizes = GGML_TYPE_SIZES.get(self.type_id)
        if sizes is None:
            return None
        block, size = sizes
        return self.n_elements // block * size


@dataclass
class GGUFInfo:
    """What a GGUF file says about itself."""

    path: Path
    version: int
    metadata: dict[str, Any]
    tensors: list[TensorInfo] = field(default_factory=list)
    data_offset: int = 0
    file_size: int = 0

    def get(self, key: str, default: Any = None) -> Any:
        return self.metadata.get(key, default)

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", "unknown"))

    def arch_value(self, suffix: str, default: Any = None) -> Any:
        return self.metadata.get(f"{self.architecture}.{suffix}", default)

    def arch_int(self, suffix: str) -> int | None:
        """An integer metadata value of this architecture (None when absent or not an integer)."""
        value = self.arch_value(suffix)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def context_length(self) -> int | None:
        return self.arch_int("context_length")

    @property
    def n_parameters(self) -> int:
        return sum(t.n_elements for t in self.tensors)

    @property
    def quantization(self) -> str:
        """The most common weight type among 2-D tensors (what people call the quant)."""
        counts: dict[str, int] = {}
        for tensor in self.tensors:
            if len(tensor.shape) >= 2:
                name = GGML_TYPE_NAMES.get(tensor.type_id, f"type{tensor.type_id}")
                counts[name] = counts.get(name, 0) + tensor.n_elements
        return max(counts, key=counts.__getitem__) if counts else "unknown"

    @property
    def chat_template(self) -> str | None:
        value = self.metadata.get("tokenizer.chat_template")
        return str(value) if value else None


class _Cursor:
    def __init__(self, buf: mmap.mmap | bytes, path: Path) -> None:
        self.buf = buf
        self.pos = 0
        self.path = path

    def _need(self, n: int) -> None:
        if self.pos + n > len(self.buf):
            raise ModelLoadError(f"{self.path.name} is truncated: its header ends early (incomplete download?)")

    def scalar(self, fmt: str) -> Any:
        n = struct.calcsize(fmt)
        self._need(n)
        (value,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += n
        return value

    def string(self) -> str:
        length = self.scalar("<Q")
        self._need(length)
        raw = bytes(self.buf[self.pos : self.pos + length])
        self.pos += length
        return raw.decode("utf-8", errors="replace")

    def value(self, type_id: int, depth: int = 0) -> Any:
        if type_id == _STRING:
            return self.string()
        if type_id == _ARRAY:
            if depth >= MAX_ARRAY_DEPTH:
                raise ModelLoadError(f"{self.path.name} has metadata arrays nested {depth} deep: not a valid GGUF file")
            item_type = self.scalar("<I")
            count = self.scalar("<Q")
            if item_type in _SCALARS:
                fmt = _SCALARS[item_type]
                size = struct.calcsize(fmt)
                self._need(size * count)
                items = list(struct.unpack_from(f"<{count}{fmt[1:]}", self.buf, self.pos))
                self.pos += size * count
                return items
            return [self.value(item_type, depth + 1) for _ in range(count)]
        scalar = _SCALARS.get(type_id)
        if scalar is None:
            raise ModelLoadError(f"{self.path.name} has an unknown metadata type {type_id}: not a valid GGUF file")
        return self.scalar(scalar)


def read_gguf(path: str | Path, check_size: bool = True) -> GGUFInfo:
    """Parse a GGUF file's header; raise ModelLoadError with the reason when it is unusable."""
    path = Path(path)
    if path.is_dir():
        raise ModelLoadError(f"{path} is a folder, not a GGUF model file: choose the .gguf file inside it")
    if not path.is_file():
        raise ModelNotFoundError(f"Model file not found: {path}")
    size = path.stat().st_size
    if size < 24:
        raise ModelLoadError(f"{path.name} is not a GGUF model file (it is only {size} bytes)")
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        if buf[:4] != GGUF_MAGIC:
            raise ModelLoadError(f"{path.name} is not a GGUF model file (wrong magic bytes)")
        cur = _Cursor(buf, path)
        cur.pos = 4
        version = cur.scalar("<I")
        if version not in (2, 3):
            raise ModelLoadError(f"{path.name} uses GGUF version {version}, which is not supported")
        n_tensors = cur.scalar("<Q")
        n_kv = cur.scalar("<Q")
        if n_tensors > 1_000_000 or n_kv > 1_000_000:
            raise ModelLoadError(f"{path.name} has a corrupt GGUF header")
        metadata: dict[str, Any] = {}
        for _ in range(n_kv):
            key = cur.string()
            metadata[key] = cur.value(cur.scalar("<I"))
        tensors = []
        for _ in range(n_tensors):
            name = cur.string()
            n_dims = cur.scalar("<I")
            shape = tuple(cur.scalar("<Q") for _ in range(n_dims))
            tensors.append(TensorInfo(name, shape, cur.scalar("<I"), cur.scalar("<Q")))
        alignment = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
        if not isinstance(alignment, int) or isinstance(alignment, bool) or not 0 < alignment <= 1 << 20:
            raise ModelLoadError(f"{path.name} has an invalid alignment ({alignment!r}): not a valid GGUF file")
        data_offset = (cur.pos + alignment - 1) // alignment * alignment
    info = GGUFInfo(path, version, metadata, tensors, data_offset, size)
    if check_size:
        _check_complete(info)
    return info


def _check_complete(info: GGUFInfo) -> None:
    needed = info.data_offset
    for tensor in info.tensors:
        n_bytes = tensor.n_bytes
        if n_bytes is not None:
            needed = max(needed, info.data_offset + tensor.offset + n_bytes)
    if needed > info.file_size:
        raise ModelLoadError(
            f"{info.path.name} is truncated: {info.file_size / 1e6:.1f} MB of {needed / 1e6:.1f} MB "
            "(incomplete download? download it again)"
        )
