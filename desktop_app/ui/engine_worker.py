"""The engine's child process: owns one Engine, takes commands from a pipe, sends events back.

No Qt here (this module is what the spawned process imports). Every message is a plain
picklable ``(kind, payload)`` tuple.

Commands (parent -> child):
    ("load", {"target": path or "" (the default model), "target_options": {...},
              "draft": path | None, "draft_options": {...}})
    ("generate", {"id": int, "messages": [...], "max_tokens": int, "temperature": float,
                  "seed": int | None, "spec": "off"|"on"|"auto", "draft_max": int, "drafter": str | None})
    ("cancel", None)      stops the running generation at the next token
    ("shutdown", None)

Events (child -> parent):
    ("ready", {"pid", "backend", "backend_name", "device"})
    ("loading", {"stage": "target"|"draft", "path": str})
    ("load_progress", {"stage": "target"|"draft", "fraction": 0..1})  rising, at most every
                      PROGRESS_INTERVAL_S, and always ending with 1.0 when the stage loaded
    ("model_loaded", {"target": ModelInfo dict, "draft": ModelInfo dict | None,
                      "draft_compatibility": str | None, "draft_error": str | None,
                      "speculation_refusal": str | None, "backend": str})
    ("load_failed", {"message": str})
    ("chunks", {"id": int, "pieces": [(text, from_draft), ...]})
    ("stats", {"id": int, "stats": GenerationStats.to_dict()})
    ("finished", {"id": int, "text": str, "stats": dict})
    ("failed", {"id": int, "message": str})

Loading and generating run on one job thread, in order; the main thread keeps reading the pipe
so that "cancel" takes effect while a generation runs.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import threading
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

CHUNK_FLUSH_S = 0.03  # coalesce text pieces: ~30 messages/s at most, whatever the model's speed
PROGRESS_INTERVAL_S = 0.05  # llama.cpp reports load progress per tensor: hundreds of calls a second


class LoadProgress:
    """The ``progress`` callback for one load stage: sends rising fractions, throttled.

    llama.cpp calls it from the loading thread; it only sends pipe messages. ``done()`` makes
    sure the stage ends on 1.0 even when the loader skipped its last call.
    """

    def __init__(self, send: Callable[[str, Any], None], stage: str,
                 interval_s: float = PROGRESS_INTERVAL_S) -> None:
        self._send = send
        self._stage = stage
        self._interval_s = interval_s
        self._last_time = float("-inf")
        self.last_sent = -1.0

    def __call__(self, fraction: float) -> None:
        fraction = min(1.0, max(0.0, fraction))
        now = time.perf_counter()
        if fraction <= self.last_sent:
            return  # never step back, never repeat
        if fraction < 1.0 and now - self._last_time < self._interval_s:
            return
        self._last_time = now
        self.last_sent = fraction
        self._send("load_progress", {"stage": self._stage, "fraction": fraction})

    def done(self) -> None:
        self(1.0)


def default_threads() -> int:
    """Every core on small machines: decoding speed scales with them (2 cores: 143 tok/s vs
    89 with one), and the window's thread mostly sleeps (the responsiveness test holds).
    Bigger machines keep a core or two free for the window and the desktop."""
    cores = os.cpu_count() or 1
    return cores if cores <= 4 else cores - 1 if cores <= 8 else cores - 2


class _Worker:
    def __init__(self, conn: Connection) -> None:
        from desktop_app.engine import Engine

        self.conn = conn
        self.engine = Engine()
        self.jobs: queue.Queue[tuple[str, Any] | None] = queue.Queue()
        self.cancel = threading.Event()
        self._send_lock = threading.Lock()

    def send(self, kind: str, payload: Any) -> None:
        with self._send_lock:
            try:
                self.conn.send((kind, payload))
            except (BrokenPipeError, OSError):
                pass  # the window went away; the main loop ends on EOF

    # ------------------------------------------------------------------ jobs
    def run_jobs(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            kind, payload = job
            try:
                if kind == "load":
                    self.load(payload)
                elif kind == "generate":
                    self.generate(payload)
            except Exception as exc:  # noqa: BLE001 - reported to the window, the process lives on
                message = str(exc) if _is_user_error(exc) else f"{type(exc).__name__}: {exc}"
                if not _is_user_error(exc):
                    traceback.print_exc()
                if kind == "load":
                    self.send("load_failed", {"message": message})
                else:
                    self.send("failed", {"id": payload.get("id", 0), "message": message})

    def load(self, payload: dict[str, Any]) -> None:
        from desktop_app.engine import IncompatibleDraftError, ModelOptions, default_model_path

        # "" is the embedded default model, resolved here so the window never imports llama.cpp
        target, draft = payload["target"] or default_model_path(), payload.get("draft")
        self.send("loading", {"stage": "target", "path": str(target)})
        progress = LoadProgress(self.send, "target")
        info = self.engine.load_target(target, ModelOptions(**payload.get("target_options", {})), progress=progress)
        progress.done()
        draft_info = None
        compatibility = None
        draft_error = None
        if draft:
            self.send("loading", {"stage": "draft", "path": str(draft)})
            progress = LoadProgress(self.send, "draft")
            try:
                verdict = self.engine.load_draft(draft, ModelOptions(**payload.get("draft_options", {})),
                                                 progress=progress)
                progress.done()
                assert self.engine.draft is not None
                draft_info = dataclasses.asdict(self.engine.describe(self.engine.draft))
                compatibility = verdict.summary()
            except IncompatibleDraftError as exc:
                draft_error = "; ".join(exc.reasons)
            except Exception as exc:  # noqa: BLE001 - the target still works without the draft
                draft_error = str(exc)
        else:
            self.engine.unload_draft()
        self.send(
            "model_loaded",
            {
                "target": dataclasses.asdict(info),
                "draft": draft_info,
                "draft_compatibility": compatibility,
                "draft_error": draft_error,
                "speculation_refusal": self.engine.speculation_refusal(),
                "backend": self.engine.backend().summary(),
            },
        )
        # Auto mode's cost measurement (about a second) now, while the user types, instead of
        # in the first answer. A later message simply waits in the job queue.
        try:
            self.engine.prepare_auto(should_stop=lambda: not self.jobs.empty())
        except Exception:  # noqa: BLE001 - auto measures lazily on first use instead
            traceback.print_exc()

    def generate(self, payload: dict[str, Any]) -> None:
        from desktop_app.engine import Finished, GenerateRequest, SamplingParams, StatsUpdate, TextChunk

        request_id = payload["id"]
        self.cancel.clear()
        request = GenerateRequest(
            messages=payload["messages"],
            max_tokens=payload.get("max_tokens", 512),
            sampling=SamplingParams(temperature=payload.get("temperature", 0.0), seed=payload.get("seed")),
            spec=payload.get("spec", "auto"),
            draft_max=payload.get("draft_max", 4),
            drafter=payload.get("drafter"),
        )
        pieces: list[tuple[str, bool]] = []
        last_flush = time.perf_counter()

        def flush() -> None:
            nonlocal last_flush
            if pieces:
                self.send("chunks", {"id": request_id, "pieces": list(pieces)})
                pieces.clear()
            last_flush = time.perf_counter()

        for event in self.engine.generate(request, self.cancel):
            if isinstance(event, TextChunk):
                if pieces and pieces[-1][1] == event.from_draft:
                    pieces[-1] = (pieces[-1][0] + event.text, event.from_draft)
                else:
                    pieces.append((event.text, event.from_draft))
                if time.perf_counter() - last_flush >= CHUNK_FLUSH_S:
                    flush()
            elif isinstance(event, StatsUpdate):
                flush()
                self.send("stats", {"id": request_id, "stats": event.stats.to_dict()})
            elif isinstance(event, Finished):
                flush()
                self.send("finished", {"id": request_id, "text": event.text, "stats": event.stats.to_dict()})

    # ------------------------------------------------------------------ main loop
    def serve(self) -> None:
        backend = self.engine.backend()
        gpus = [d for d in backend.devices if d.kind != "cpu"]
        device = gpus[0].description if gpus else (backend.devices[0].description if backend.devices else "CPU")
        self.send("ready", {"pid": os.getpid(), "backend": backend.summary(), "backend_name": backend.name,
                            "device": device})
        jobs = threading.Thread(target=self.run_jobs, name="engine-jobs", daemon=True)
        jobs.start()
        while True:
            try:
                kind, payload = self.conn.recv()
            except (EOFError, OSError):
                break
            if kind == "cancel":
                self.cancel.set()
            elif kind == "shutdown":
                break
            else:
                self.jobs.put((kind, payload))
        self.cancel.set()
        self.jobs.put(None)
        jobs.join(timeout=1.0)  # a generation stops within one cycle; a long decode may not
        if jobs.is_alive():
            # A native decode is still running (a big prompt, a busy machine): freeing the
            # models under it would be unsafe, and the process is ending anyway.
            os._exit(0)
        self.engine.close()


def _is_user_error(exc: BaseException) -> bool:
    from desktop_app.engine import EngineError

    return isinstance(exc, (EngineError, ValueError, FileNotFoundError))


def serve(conn: Connection) -> None:
    """The child process's entry point (``multiprocessing`` spawn target)."""
    # numpy's OpenBLAS would start (and spin) a thread per core on import; the engine only does
    # small vector work in numpy, and those cores belong to llama.cpp and the window.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    _Worker(conn).serve()
