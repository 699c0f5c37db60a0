"""Process-wide llama.cpp set-up: backend init, a quiet log hook, and what hardware runs.

llama.cpp logs through a C callback. The callback object must stay referenced for as long as
the library may call it (a temporary one segfaults the process), so it lives in this module.
"""

from __future__ import annotations

import ctypes
import hashlib
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import llama_cpp

from desktop_app.engine.api import DRAFT_K

_lock = threading.Lock()
_initialised = False
_recent_log: deque[str] = deque(maxlen=40)
_log_echo = False


def _on_log(level: int, text: bytes | None, user_data: ctypes.c_void_p) -> None:
    if not text:
        return
    line = text.decode("utf-8", errors="replace").rstrip()
    if line:
        _recent_log.append(line)
        if _log_echo:
            print(line)


_LOG_CALLBACK = llama_cpp.llama_log_callback(_on_log)
LOG_CALLBACK = _LOG_CALLBACK  # the vision projector's log goes the same way (llama/vision.py)


def ensure_backend(echo_log: bool = False) -> None:
    """Initialise llama.cpp once per process and route its logs into a ring buffer."""
    global _initialised, _log_echo
    with _lock:
        _log_echo = echo_log
        if _initialised:
            return
        llama_cpp.llama_log_set(_LOG_CALLBACK, ctypes.c_void_p(0))
        llama_cpp.llama_backend_init()
        _initialised = True


def recent_log(n: int = 8) -> list[str]:
    """The last lines llama.cpp logged (used to explain load failures)."""
    return list(_recent_log)[-n:]


def clear_log() -> None:
    _recent_log.clear()


def load_failure_reason() -> str:
    """Why llama.cpp just refused a file, from its log (e.g. "unknown model architecture: 'x'")."""
    lines = recent_log(12)
    for marker in ("error loading model:", "error:", "failed"):
        for line in reversed(lines):
            if marker in line.lower():
                return line.split(marker, 1)[-1].strip() if marker.endswith(":") else line.strip()
    return (lines[-1] if lines else "unknown error").strip()


@dataclass(frozen=True)
class Device:
    name: str
    description: str
    kind: str  # "cpu", "gpu", "igpu", "accel"
    memory_total: int | None = None
    memory_free: int | None = None


@dataclass(frozen=True)
class BackendInfo:
    """Which compute backend llama.cpp uses and on what devices."""

    name: str
    gpu_offload: bool
    devices: list[Device] = field(default_factory=list)
    system_info: str = ""
    build_gaps: tuple[str, ...] = ()  # what SpecChat's own build has and this one lacks

    def build_warning(self) -> str | None:
        """One line saying what this llama.cpp build lacks, or None when it is SpecChat's."""
        if not self.build_gaps:
            return None
        return (
            "this llama-cpp-python is not SpecChat's build ("
            + "; ".join(self.build_gaps)
            + "): rebuild it with `make setup`"
        )

    def summary(self) -> str:
        gpus = [d for d in self.devices if d.kind != "cpu"]
        if not gpus:
            return f"{self.name}"
        first = gpus[0]
        mem = f", {first.memory_total / 2**30:.0f} GiB" if first.memory_total else ""
        return f"{self.name}: {first.description}{mem}"


_DEV_KIND = {0: "cpu", 1: "gpu", 2: "igpu", 3: "accel"}


def _devices() -> list[Device]:
    """Enumerate ggml backend devices through the bundled ggml library, when it exports them."""
    try:
        lib = llama_cpp.llama_cpp._lib
        count_fn = lib.ggml_backend_dev_count
        get_fn = lib.ggml_backend_dev_get
        name_fn = lib.ggml_backend_dev_name
        desc_fn = lib.ggml_backend_dev_description
        type_fn = lib.ggml_backend_dev_type
        mem_fn = lib.ggml_backend_dev_memory
    except AttributeError:
        return []
    count_fn.restype = ctypes.c_size_t
    get_fn.argtypes, get_fn.restype = [ctypes.c_size_t], ctypes.c_void_p
    name_fn.argtypes, name_fn.restype = [ctypes.c_void_p], ctypes.c_char_p
    desc_fn.argtypes, desc_fn.restype = [ctypes.c_void_p], ctypes.c_char_p
    type_fn.argtypes, type_fn.restype = [ctypes.c_void_p], ctypes.c_int
    mem_fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]
    mem_fn.restype = None
    devices = []
    for i in range(count_fn()):
        dev = get_fn(i)
        free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
        mem_fn(dev, ctypes.byref(free), ctypes.byref(total))
        kind = _DEV_KIND.get(type_fn(dev), "other")
        devices.append(
            Device(
                name=(name_fn(dev) or b"").decode(errors="replace"),
                description=(desc_fn(dev) or b"").decode(errors="replace"),
                kind=kind,
                memory_total=total.value or None,
                memory_free=free.value or None,
            )
        )
    return devices


def backend_info() -> BackendInfo:
    ensure_backend()
    devices = _devices()
    system = llama_cpp.llama_print_system_info().decode(errors="replace")
    gpu_names = [d.name for d in devices if d.kind != "cpu"]
    if gpu_names:
        name = gpu_names[0].rstrip("0123456789").upper() or "GPU"
        name = {"MTL": "Metal", "METAL": "Metal", "VULKAN": "Vulkan", "CUDA": "CUDA"}.get(name, name)
    else:
        name = "CPU"
    return BackendInfo(name, bool(llama_cpp.llama_supports_gpu_offload()), devices, system, build_gaps(system))


def build_gaps(system_info: str) -> tuple[str, ...]:
    """What SpecChat's build of llama.cpp (the Makefile's CMake arguments and patches) has that
    the one loaded lacks, read from llama.cpp's system info and exports. A plain `pip install`
    gets the stock wheel: it runs, but without these."""
    gaps = []
    if not llama_cpp.llama_supports_rpc():
        gaps.append("no RPC backend: workers are unavailable")
    if llamafile_in_verify_passes(system_info):
        gaps.append("llamafile kernels: greedy text with speculation may part from plain decoding at near-ties")
    if "AVX2 = 1" in system_info and "SPECCHAT_BATCH_ROWS = 1" not in system_info:
        gaps.append("no batch-row kernels: verifying a draft costs more on this CPU")
    return tuple(gaps)


def _cpu_feature(name: str) -> bool:
    ensure_backend()
    return f"{name} = 1" in llama_cpp.llama_print_system_info().decode(errors="replace")


def prefill_gemm_rows(system_info: str) -> int | None:
    """The row count above which this build lets llamafile's kernels multiply a batch
    (``packaging/llama/prefill-gemm.patch``: ``SPECCHAT_PREFILL_GEMM = 65``), or None where the
    build does not say (no llamafile, or llamafile for every batch)."""
    found = re.search(r"SPECCHAT_PREFILL_GEMM = (\d+)", system_info)
    return int(found.group(1)) if found else None


def llamafile_in_verify_passes(system_info: str) -> bool:
    """Whether llamafile's kernels may compute a speculative verify pass on this build, where a row
    inside a batch comes out differently from the same row alone: ``LLAMAFILE = 1`` without our
    patch's limit, or with one below the largest verify pass (the last token and the largest
    draft). With the patch they multiply only the larger batches of prompt reading."""
    if "LLAMAFILE = 1" not in system_info:
        return False
    rows = prefill_gemm_rows(system_info)
    return rows is None or rows < DRAFT_K.high + 1


def cpu_has_inexact_llamafile() -> bool:
    """Whether this llama.cpp build may multiply a verify pass on the CPU with llamafile's
    kernels (:func:`llamafile_in_verify_passes` of its system info)."""
    ensure_backend()
    return llamafile_in_verify_passes(llama_cpp.llama_print_system_info().decode(errors="replace"))


def cpu_has_batch_rows() -> bool:
    """Whether this llama.cpp build has our batch kernels (``packaging/llama/batch-rows.patch``,
    x86 CPUs with AVX2): a draft's rows share each Q4_1 or Q8_0 weight row, so verifying it costs
    less, and every row comes out bit-identical to the same row decoded alone."""
    return _cpu_feature("SPECCHAT_BATCH_ROWS")


def build_fingerprint() -> str:
    """This llama.cpp build as far as timings go: llama-cpp-python's version, the CPU features
    it was built with, and its libraries' sizes and dates (a rebuild with other patches or
    flags times differently, whatever its version says)."""
    lib_dir = Path(llama_cpp.llama_cpp._lib._name).parent
    files = sorted(lib_dir.glob("lib*"))
    stamps = [f"{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in files if f.is_file()]
    system = llama_cpp.llama_print_system_info().decode(errors="replace")
    parts = "\0".join([llama_cpp.__version__, system, *stamps])
    return hashlib.sha256(parts.encode()).hexdigest()[:16]
