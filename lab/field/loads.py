"""What else runs on the machine while the field bench measures: nothing, a busy loop, or another
llama process decoding (as a second local model, a second SpecChat or a llama-server would).

Each load is started after the machine was found quiet and stopped after the round, so other
programs' noise is waited out and the load measured is the one named.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

from desktop_app.bench.quiet import busy_processes

LOADS = ("idle", "busy", "llama")
# Another llama process: the CLI answering a long request again and again, plain decoding, with
# its own home. It stops when the bench does, even when the bench is killed (it watches its
# parent), and each answer is bounded so that an orphaned one ends within a minute or so.
LLAMA_LOOP = """
import os, subprocess, sys
parent = os.getppid()
command = [sys.executable, "-m", "desktop_app", "generate", "--spec", "off", "--max-tokens", "2000",
           "--prompt", "Write a long story about a lighthouse keeper and her brother, chapter by chapter."]
while os.getppid() == parent:
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
"""
LLAMA_SETTLE_S = 5.0  # the loop's first model load is over and it decodes


def parse_loads(text: str) -> list[str]:
    """``idle,busy,llama``: the loads to measure under, in that order."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [n for n in names if n not in LOADS]
    if unknown or not names:
        raise ValueError(f"loads are a comma-separated list of {', '.join(LOADS)}, not {text!r}")
    return names


@contextlib.contextmanager
def background(load: str) -> Iterator[None]:
    """Run the block under ``load``."""
    if load == "idle":
        yield
    elif load == "busy":
        with busy_processes(1):
            yield
    elif load == "llama":
        with tempfile.TemporaryDirectory(prefix="specchat-field-load-") as home:
            loop = subprocess.Popen(
                [sys.executable, "-c", LLAMA_LOOP],
                env={**os.environ, "SPECCHAT_HOME": home},
                start_new_session=True,  # its answers are killed with it, as a group
            )
            try:
                time.sleep(LLAMA_SETTLE_S)
                yield
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(loop.pid, signal.SIGKILL)
                loop.wait()
    else:
        raise ValueError(f"no load {load!r}; known: {', '.join(LOADS)}")
