"""llama.cpp's RPC backend: serve this machine's compute to others, and place a target's layers
on workers. Only llama.cpp's own protocol is spoken (``ggml-rpc``); nothing here is home-made
except a read-only check that a worker answers its handshake before llama.cpp connects, and the
worker's gate (:mod:`rpc_gate`) that waits for that handshake before relaying a connection.

llama.cpp aborts the whole process when a worker cannot be reached or drops mid-answer, so
:func:`probe` runs first (a clear error instead of an abort) and :func:`on_fatal` lets the
caller say something useful before an abort it cannot prevent (the app's engine runs in its own
process, so the window survives and offers to reload locally).
"""

from __future__ import annotations

import ctypes
import os
import socket
import struct
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import llama_cpp

from desktop_app.engine.errors import EngineError, WorkerError
from desktop_app.engine.llama import rpc_gate
from desktop_app.engine.llama.backend import ensure_backend
from desktop_app.engine.workers import LayerSplit, WorkerAddress

RPC_PROTO_MAJOR = 7  # ggml-rpc.h RPC_PROTO_MAJOR_VERSION of the vendored llama.cpp
_HELLO_CMD = rpc_gate.HELLO_CMD
_CAPS_SIZE = 24  # RPC_CONN_CAPS_SIZE
PROBE_TIMEOUT_S = 5.0
EXIT_WORKER_LOST = 75  # the engine process's exit status after llama.cpp aborted on a lost worker
_DEV_GPU, _DEV_IGPU = 1, 2  # enum ggml_backend_dev_type

NOT_BUILT = (
    "this llama-cpp-python was built without llama.cpp's RPC backend; rebuild it with "
    "CMAKE_ARGS=-DGGML_RPC=on (`make` does this by default)"
)


def supported() -> bool:
    return bool(llama_cpp.llama_supports_rpc())


def require_rpc() -> None:
    if not supported():
        raise EngineError(NOT_BUILT)


# --------------------------------------------------------------------- the ggml symbols
class _Ggml:
    """The few ggml backend-registry functions, from the libraries llama_cpp already loaded."""

    def __init__(self) -> None:
        lib = llama_cpp.llama_cpp._lib
        p, s = ctypes.c_void_p, ctypes.c_size_t

        def bind(name: str, argtypes: list[Any], restype: Any) -> Any:
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = argtypes, restype
            return fn

        self.reg_by_name = bind("ggml_backend_reg_by_name", [ctypes.c_char_p], p)
        self.proc_address = bind("ggml_backend_reg_get_proc_address", [p, ctypes.c_char_p], p)
        self.reg_dev_count = bind("ggml_backend_reg_dev_count", [p], s)
        self.reg_dev_get = bind("ggml_backend_reg_dev_get", [p, s], p)
        self.dev_count = bind("ggml_backend_dev_count", [], s)
        self.dev_get = bind("ggml_backend_dev_get", [s], p)
        self.dev_type = bind("ggml_backend_dev_type", [p], ctypes.c_int)
        self.dev_by_type = bind("ggml_backend_dev_by_type", [ctypes.c_int], p)
        self.dev_name = bind("ggml_backend_dev_name", [p], ctypes.c_char_p)
        self.dev_memory = bind("ggml_backend_dev_memory", [p, ctypes.POINTER(s), ctypes.POINTER(s)], None)
        self.set_abort_callback = bind("ggml_set_abort_callback", [p], p)

    def rpc_function(self, name: str, prototype: Any) -> Any:
        require_rpc()
        reg = self.reg_by_name(b"RPC")
        address = self.proc_address(reg, name.encode()) if reg else None
        if not address:
            raise EngineError(NOT_BUILT)
        return prototype(address)

    def memory(self, dev: int) -> tuple[int, int]:
        free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
        self.dev_memory(dev, ctypes.byref(free), ctypes.byref(total))
        return free.value, total.value


_ggml: _Ggml | None = None


def ggml() -> _Ggml:
    global _ggml
    ensure_backend()
    if _ggml is None:
        _ggml = _Ggml()
    return _ggml


# --------------------------------------------------------------------- reaching workers
def probe(worker: WorkerAddress, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Check that ``worker`` is a llama.cpp RPC server speaking our protocol version, with its
    own handshake; raises WorkerError saying what is wrong. The worker serves the next client
    (llama.cpp) once this connection closes."""
    where = str(worker)
    try:
        with socket.create_connection((worker.host, worker.port), timeout=timeout_s) as sock:
            sock.settimeout(timeout_s)
            sock.sendall(struct.pack("<BQ", _HELLO_CMD, _CAPS_SIZE) + bytes(_CAPS_SIZE))
            header = _receive(sock, 8)
            (size,) = struct.unpack("<Q", header)
            if size != 4 + _CAPS_SIZE:
                raise WorkerError(
                    f"{where} is not a specchat worker (it answered the llama.cpp RPC handshake "
                    "wrongly; is another program using that port?)"
                )
            major, minor, patch = _receive(sock, size)[:3]
    except socket.gaierror:
        raise WorkerError(f"cannot find worker host {worker.host!r} (unknown name)") from None
    except ConnectionRefusedError:
        raise WorkerError(
            f"cannot reach worker {where}: nothing listens there (start `specchat worker` on it, "
            "with --host set to an address this computer can reach)"
        ) from None
    except TimeoutError:
        raise WorkerError(
            f"worker {where} did not answer the handshake within {timeout_s:.0f} s: it is busy "
            "with another computer (a worker serves one at a time), or it is not a specchat "
            "worker"
        ) from None
    except OSError as exc:
        raise WorkerError(f"cannot reach worker {where}: {exc.strerror or exc}") from None
    if major != RPC_PROTO_MAJOR:
        raise WorkerError(
            f"worker {where} speaks RPC protocol {major}.{minor}.{patch}, this app "
            f"{RPC_PROTO_MAJOR}.x: install the same SpecChat version on both computers"
        )


def _receive(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise WorkerError(
                f"{sock.getpeername()[0]} closed the connection during the handshake: "
                "it is not a specchat worker, or it refused this computer"
            )
        data += chunk
    return data


@dataclass(frozen=True)
class RemoteDevice:
    worker: WorkerAddress
    pointer: int  # ggml_backend_dev_t
    name: str  # llama.cpp's "RPC0", "RPC1"...
    memory_free: int
    memory_total: int


# Models of this process that hold each worker. llama.cpp keeps one connection per worker while
# any of them lives, and a worker serves one connection at a time, so a worker in use here is
# not probed again (a probe would wait behind our own connection).
_in_use: Counter[WorkerAddress] = Counter()
_in_use_lock = threading.Lock()


def connect(workers: Sequence[WorkerAddress]) -> list[RemoteDevice]:
    """The devices of each worker, after :func:`probe` found each one reachable. Pair with
    :func:`release` once the model placed on them is freed."""
    require_rpc()
    with _in_use_lock:
        for worker in workers:
            if not _in_use[worker]:
                probe(worker)
    g = ggml()
    add_server = g.rpc_function("ggml_backend_rpc_add_server", ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_char_p))
    devices = []
    for worker in workers:
        reg = add_server(worker.endpoint.encode())
        count = g.reg_dev_count(reg) if reg else 0
        if not count:
            raise WorkerError(f"worker {worker} offers no device to compute on")
        for i in range(count):
            dev = g.reg_dev_get(reg, i)
            free, total = g.memory(dev)
            devices.append(RemoteDevice(worker, dev, (g.dev_name(dev) or b"").decode(), free, total))
    return devices


def hold(workers: Sequence[WorkerAddress]) -> None:
    with _in_use_lock:
        _in_use.update(workers)


def release(workers: Sequence[WorkerAddress]) -> None:
    with _in_use_lock:
        _in_use.subtract(workers)


def local_gpus() -> list[int]:
    """This machine's GPU devices (integrated ones only when there is no discrete one), as
    llama.cpp's default placement picks them."""
    g = ggml()
    found: dict[int, list[int]] = {_DEV_GPU: [], _DEV_IGPU: []}
    for i in range(g.dev_count()):
        dev = g.dev_get(i)
        kind = g.dev_type(dev)
        if kind in found:
            found[kind].append(dev)
    return found[_DEV_GPU] or found[_DEV_IGPU][:1]


# --------------------------------------------------------------------- placing layers
@dataclass
class Placement:
    """What ``llama_model_params`` needs to spread a target over workers (and local GPUs)."""

    devices: Any  # NULL-terminated ggml_backend_dev_t array; must outlive the load
    tensor_split: Any  # float array of llama_max_devices() entries
    n_gpu_layers: int
    layers: dict[str, int]  # "this computer" / worker address -> repeating layers held there

    def describe(self) -> str:
        return ", ".join(f"{where}: {n} layer{'s' if n != 1 else ''}" for where, n in self.layers.items())


HERE = "this computer"


def place(
    n_layer: int, remote: Sequence[RemoteDevice], split: LayerSplit, gpus: Sequence[int], use_gpu: bool
) -> Placement:
    """Spread ``n_layer`` repeating layers: the workers' shares go to their devices, this
    computer's share to its GPUs when it has them (``use_gpu``), else to its CPU. The output
    layer goes with the last device (a local GPU, else the last worker, else this CPU)."""
    workers = list(dict.fromkeys(d.worker for d in remote))
    counts = layer_counts(n_layer, split.shares(len(workers)))
    here, per_worker = counts[0], dict(zip(workers, counts[1:]))
    devices: list[tuple[int, str, int]] = []  # pointer, owner, layers
    for worker in workers:
        mine = [d for d in remote if d.worker == worker]
        devices += [
            (d.pointer, str(worker), n) for d, n in zip(mine, layer_counts(per_worker[worker], [1.0] * len(mine)))
        ]
    local_gpus_used = list(gpus) if use_gpu else []
    if local_gpus_used:
        devices += [(g, HERE, n) for g, n in zip(local_gpus_used, layer_counts(here, [1.0] * len(local_gpus_used)))]
        here = 0
    offloaded = n_layer - here
    weights = [float(n) for _, _, n in devices]
    if here == 0:  # nothing stays on this CPU: the output layer goes to the last device too
        offloaded += 1
        weights[-1] += 1
    max_devices = int(llama_cpp.llama_max_devices())
    if len(devices) > max_devices:
        raise EngineError(f"{len(devices)} devices is more than this llama.cpp supports ({max_devices})")
    pointers = (ctypes.c_void_p * (len(devices) + 1))(*[d[0] for d in devices], None)
    tensor_split = (ctypes.c_float * max_devices)(*weights)
    layers = {HERE: counts[0], **{str(w): per_worker[w] for w in workers}}
    return Placement(pointers, tensor_split, offloaded, layers)


def layer_counts(n: int, shares: Sequence[float]) -> list[int]:
    """``n`` whole layers in proportion to ``shares`` (largest remainders get the rest)."""
    total = sum(shares)
    if n <= 0 or total <= 0:
        return [0] * len(shares)
    exact = [n * s / total for s in shares]
    counts = [int(x) for x in exact]
    by_remainder = sorted(range(len(shares)), key=lambda i: exact[i] - counts[i], reverse=True)
    for i in by_remainder[: n - sum(counts)]:
        counts[i] += 1
    return counts


# --------------------------------------------------------------------- when a worker is lost
_ABORT_PROTOTYPE = ctypes.CFUNCTYPE(None, ctypes.c_char_p)
_abort_hook: Any = None  # the ctypes callback; referenced here for as long as ggml may call it


def unreachable(workers: Sequence[WorkerAddress], timeout_s: float = 1.0, settle_s: float = 0.3) -> list[WorkerAddress]:
    """The workers that refuse a connection now. A worker busy with another client still accepts
    one (into its listen queue), so it is not counted. A worker that is being killed may still
    accept one while its process is torn down, so the check waits ``settle_s`` first."""
    time.sleep(settle_s)
    lost = []
    for worker in workers:
        try:
            socket.create_connection((worker.host, worker.port), timeout=timeout_s).close()
        except OSError:
            lost.append(worker)
    return lost


def lost_message(workers: Sequence[WorkerAddress]) -> str:
    named = ", ".join(str(w) for w in unreachable(workers)) if workers else ""
    return (f"Lost the connection to worker {named}" if named else "Lost the connection to a worker") + (
        " (it stopped, or the network dropped)"
    )


def on_fatal(report: Callable[[str], None], workers: Callable[[], Sequence[WorkerAddress]] = tuple) -> None:
    """Have llama.cpp's fatal errors reported through ``report`` (a sentence for the user)
    before the process ends. A lost worker (named when ``workers()`` lists the ones in use)
    ends it with :data:`EXIT_WORKER_LOST`; anything else still aborts as llama.cpp would."""
    global _abort_hook

    def handle(raw: bytes | None) -> None:
        message = (raw or b"").decode(errors="replace").strip()
        lost = "RPC" in message
        try:
            report(lost_message(workers()) if lost else f"llama.cpp failed: {message}")
        except Exception:  # noqa: BLE001 - nothing may stop the exit below
            pass
        if lost:
            sys.stdout.flush()
            os._exit(EXIT_WORKER_LOST)

    _abort_hook = _ABORT_PROTOTYPE(handle)
    ggml().set_abort_callback(ctypes.cast(_abort_hook, ctypes.c_void_p))


# --------------------------------------------------------------------- serving
def serve(host: str, port: int, threads: int, announce: Callable[[str], None] = print) -> None:
    """Serve this machine's devices (its GPUs, else its CPU) to other computers until killed;
    returns only when serving could not start (the port taken, say), as WorkerError.

    llama.cpp's server listens on a free loopback port; the public port is our gate
    (:mod:`rpc_gate`), which drops connections that send no hello within a few seconds."""
    require_rpc()
    g = ggml()
    devices = local_gpus() or [g.dev_by_type(0)]
    start = g.rpc_function(
        "ggml_backend_rpc_start_server",
        ctypes.CFUNCTYPE(
            None, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)
        ),
    )
    array = (ctypes.c_void_p * len(devices))(*devices)
    endpoint = WorkerAddress(host, port).endpoint
    cannot = WorkerError(
        f"the worker could not listen on {endpoint} (is the port in use, or the address not this computer's?)"
    )
    try:
        listener = rpc_gate.listen(host, port)
    except OSError:
        raise cannot from None
    with socket.socket() as free:  # a free loopback port for llama.cpp (taken between here and its bind: it ends)
        free.bind(("127.0.0.1", 0))
        private = int(free.getsockname()[1])
    # The call never returns while serving; ctypes lets go of the GIL, so the gate runs meanwhile.
    server = threading.Thread(
        target=start,
        args=(f"127.0.0.1:{private}".encode(), None, threads, len(devices), array),
        name="llama-rpc-server",
        daemon=True,
    )
    server.start()
    announce(
        f"specchat worker: serving on {WorkerAddress(host, port)} (llama.cpp's RPC server listens behind it on "
        f"127.0.0.1:{private}, reached through this worker only)"
    )
    with listener:
        rpc_gate.RpcGate(listener, ("127.0.0.1", private), alive=server.is_alive).serve_forever()
    raise cannot


def device_lines(devices: Sequence[RemoteDevice]) -> list[str]:
    return [
        f"{d.name} on {d.worker}: {d.memory_total / 2**30:.1f} GiB ({d.memory_free / 2**30:.1f} GiB free)"
        for d in devices
    ]
