"""Remote workers: where a target's layers may run besides this machine. Llama-free.

A worker is another computer running ``specchat worker`` (llama.cpp's RPC server). The target's
layers are spread over this machine and the workers in proportion to :class:`LayerSplit`; the
draft always stays local. The llama.cpp side (probing, devices, serving) is
:mod:`desktop_app.engine.llama.rpc`.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from desktop_app.engine.ranges import NumberRange, shown

WORKER_PORT = NumberRange("worker_port", int, 1, 65535, 50052, "TCP port of a specchat worker")
WORKER_HOST = "127.0.0.1"  # a worker serves this machine only unless told otherwise
MAX_WORKERS = 16  # llama.cpp's GGML_RPC_MAX_SERVERS


@dataclass(frozen=True, order=True)
class WorkerAddress:
    """``host:port`` of one worker (an IPv6 host is written ``[::1]:50052``)."""

    host: str
    port: int = WORKER_PORT.default

    def __post_init__(self) -> None:
        if not self.host or any(c.isspace() for c in self.host) or "/" in self.host:
            raise ValueError(f"worker host must be a name or an address, not {self.host!r}")
        WORKER_PORT.check(self.port)

    @classmethod
    def parse(cls, text: str) -> WorkerAddress:
        """``host``, ``host:port``, ``[v6]:port``; ValueError saying what is wrong."""
        spec = text.strip()
        if not spec:
            raise ValueError("a worker address is empty (write host:port, e.g. 192.168.1.20:50052)")
        host, port_text = spec, ""
        if spec.startswith("["):
            end = spec.find("]")
            if end < 0:
                raise ValueError(f"worker address {shown(text)} opens '[' without closing it")
            host, rest = spec[1:end], spec[end + 1 :]
            if rest and not rest.startswith(":"):
                raise ValueError(f"worker address {shown(text)}: expected ':port' after ']'")
            port_text = rest[1:]
        elif spec.count(":") == 1:
            host, port_text = spec.split(":")
        elif spec.count(":") > 1:
            try:
                ipaddress.IPv6Address(spec)
            except ValueError:
                raise ValueError(f"worker address {shown(text)}: write an IPv6 address as [addr]:port") from None
        if port_text == "" and spec.endswith(":"):
            raise ValueError(f"worker address {shown(text)} has an empty port")
        try:
            return cls(host, WORKER_PORT.parse(port_text) if port_text else WORKER_PORT.default)
        except ValueError as exc:
            raise ValueError(f"worker address {shown(text)}: {exc}") from None

    @property
    def endpoint(self) -> str:
        """What llama.cpp's RPC backend takes (it splits on the last ':')."""
        return f"{self.host}:{self.port}"

    @property
    def is_loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else self.endpoint


def parse_workers(text: str) -> tuple[WorkerAddress, ...]:
    """A comma-separated list of worker addresses ("" is none); duplicates are an error."""
    parts = [p for p in (s.strip() for s in text.split(",")) if p]
    workers = tuple(WorkerAddress.parse(p) for p in parts)
    if len(set(workers)) != len(workers):
        raise ValueError("the same worker is listed twice")
    if len(workers) > MAX_WORKERS:
        raise ValueError(f"at most {MAX_WORKERS} workers, not {len(workers)}")
    return workers


@dataclass(frozen=True)
class LayerSplit:
    """How much of the target each machine holds: this machine first, then each worker in order.

    Weights, not layer counts: ``(1, 1, 2)`` puts a quarter of the layers here, a quarter on the
    first worker and half on the second. Empty means equal shares.
    """

    weights: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        for w in self.weights:
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not w >= 0 or w == float("inf"):
                raise ValueError(f"split weights must be numbers of 0 or more, not {w!r}")
        if self.weights and sum(self.weights) <= 0:
            raise ValueError("split weights cannot all be 0")

    @classmethod
    def parse(cls, text: str) -> LayerSplit:
        """``"1,1,2"`` (this machine, then each worker); "" is equal shares."""
        parts = [p.strip() for p in text.split(",")] if text.strip() else []
        try:
            weights = tuple(float(p) for p in parts)
        except ValueError:
            raise ValueError(f"split must be numbers separated by commas (this machine first), not {text!r}") from None
        return cls(weights)

    def shares(self, n_workers: int) -> tuple[float, ...]:
        """Normalised shares for this machine and ``n_workers`` workers (they sum to 1)."""
        weights = self.weights or (1.0,) * (n_workers + 1)
        if len(weights) != n_workers + 1:
            raise ValueError(
                f"split has {len(weights)} weights but there {'is' if n_workers == 1 else 'are'} {n_workers} "
                f"worker{'s' if n_workers != 1 else ''}: give one for this machine and one per worker"
            )
        total = sum(weights)
        return tuple(w / total for w in weights)

    def __str__(self) -> str:
        return ",".join(f"{w:g}" for w in self.weights)
