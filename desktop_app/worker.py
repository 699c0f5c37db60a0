"""``specchat worker``: lend this computer's compute to another SpecChat, through llama.cpp's
own RPC server (the other computer's engine places some of its target's layers here)."""

from __future__ import annotations

import os
import signal
import sys

from desktop_app.engine.workers import WorkerAddress

SECURITY_WARNING = (
    "llama.cpp's RPC protocol has no authentication and no encryption: anyone who can reach {where} "
    "can run computations on this computer and read what it computes. Serve only a trusted network."
)


def run_worker(host: str, port: int, threads: int) -> int:
    """Serve until killed (Ctrl+C); returns non-zero only when serving could not start."""
    from desktop_app.engine.llama import rpc

    address = WorkerAddress(host, port)
    rpc.require_rpc()
    print(f"specchat worker: {SECURITY_WARNING.format(where=address)}", file=sys.stderr)
    if not address.is_loopback:
        print(
            f"specchat worker: listening on {address}, beyond this computer: other computers on that "
            "network can use it now",
            file=sys.stderr,
        )
    sys.stderr.flush()
    # llama.cpp's server thread never returns to Python: let Ctrl+C and SIGTERM end the process at once.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    rpc.serve(
        address.host,
        address.port,
        threads or os.cpu_count() or 1,
        lambda line: print(line, file=sys.stderr, flush=True),
    )
    return 1  # not reached: serve() raises when it cannot listen
