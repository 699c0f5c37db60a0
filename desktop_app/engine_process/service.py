"""The engine's child process: owns one Engine, takes commands from a pipe, sends events back.

No Qt here (this module is what the spawned process imports). The messages are the typed
dataclasses of :mod:`desktop_app.engine_process.protocol`.

Loading and generating run on one job thread, in order; the main thread keeps reading the pipe
so that a Cancel takes effect while a generation runs.
"""

from __future__ import annotations

import os
import queue
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path

from desktop_app.engine.api import FinishReason, GenerateRequest, WorkerAddress
from desktop_app.engine.events import Event, Finished, PromptProgress, StatsUpdate, TextChunk
from desktop_app.engine.stats import GenerationStats
from desktop_app.engine_process.auto_measuring import AutoMeasuring
from desktop_app.engine_process.prompt_counter import PromptCounter
from desktop_app.engine_process.protocol import (
    STREAM_FLUSH_S,
    Cancel,
    CountPrompt,
    Done,
    Embed,
    Embedded,
    EngineEvent,
    Failed,
    Fatal,
    Generate,
    HistoryChanged,
    LiveStats,
    Load,
    Loaded,
    LoadFailed,
    Loading,
    LoadProgressed,
    Piece,
    Pieces,
    PromptRead,
    Ready,
    Shutdown,
    Stage,
)
from desktop_app.engine_process.running_jobs import RunningJobs
from desktop_app.engine_process.step_aside import stepping_aside
from desktop_app.engine_process.tool_answers import ToolAnswer

# Each message wakes the window, which on a small machine takes a core from the engine's threads
# for a moment (docs/window-speed.md): text pieces are coalesced to 5 messages a second at most,
# whatever the model's speed (the first at once), and the live figures (dial, footer) go out twice
# a second, with the text.
CHUNK_FLUSH_S = 0.2
LIVE_STATS_S = 0.5
PROGRESS_INTERVAL_S = 0.05  # llama.cpp reports load progress per tensor: hundreds of calls a second


class LoadProgress:
    """The ``progress`` callback for one load stage: sends rising fractions, throttled.

    llama.cpp calls it from the loading thread; it only sends pipe messages. ``done()`` makes
    sure the stage ends on 1.0 even when the loader skipped its last call.
    """

    def __init__(
        self, send: Callable[[EngineEvent], None], stage: Stage, interval_s: float = PROGRESS_INTERVAL_S
    ) -> None:
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
        self._send(LoadProgressed(self._stage, fraction))

    def done(self) -> None:
        self(1.0)


def add_piece(pieces: list[Piece], chunk: TextChunk) -> None:
    """Append ``chunk`` to the runs waiting to be sent: joined to the last run when it came from
    the same source (the same drafter's accepted tokens, or the target's own text)."""
    drafter = chunk.drafter if chunk.from_draft else ""
    if pieces and pieces[-1][1] == drafter:
        pieces[-1] = (pieces[-1][0] + chunk.text, drafter)
    else:
        pieces.append((chunk.text, drafter))


class _Worker:
    def __init__(self, conn: Connection) -> None:
        from desktop_app import paths
        from desktop_app.engine import CostMemory, Engine, ModelSpeeds, ThreadMemory
        from desktop_app.engine_process.history_sync import HistoryNgrams

        self.conn = conn
        self.engine = Engine(
            ThreadMemory(paths.thread_counts_file), CostMemory(paths.auto_costs_file)
        )  # thread counts kept across runs
        self.speeds = ModelSpeeds(paths.model_speeds_file)  # each model's decoding speed, for the library's advice
        self.history_ngrams = HistoryNgrams(self.engine)  # the n-gram cache learned from the chat history
        self.history: Path | None = None  # its file (from the last Load)
        self.jobs: queue.Queue[Load | Generate | Embed | None] = queue.Queue()
        self.running = RunningJobs()
        self.aside = 0  # how deep the job thread is in answers run aside (answer_waiting)
        self._send_lock = threading.Lock()
        self.counter = PromptCounter(self.engine, self.send)  # the context meter's questions
        self.measuring = AutoMeasuring(self.engine, self.jobs)  # Auto's costs, after a load and when idle

    def send(self, event: EngineEvent) -> None:
        with self._send_lock:
            try:
                self.conn.send(event)
            except (BrokenPipeError, OSError):
                pass  # the window went away; the main loop ends on EOF

    # ------------------------------------------------------------------ jobs
    def run_jobs(self) -> None:
        while True:
            self.measuring.when_idle()
            if (job := self.jobs.get()) is None:
                return
            self.run(job)

    def run(self, job: Load | Generate | Embed) -> None:
        try:
            if isinstance(job, Load):
                self.load(job)
                return
            cancel = self.running.begin(job.id)  # a Cancel reaches an answer or an embedding by its id
            try:
                if isinstance(job, Embed):
                    result = None if cancel is None else self.engine.embed(job.texts, cancel, self.answer_waiting)
                    self.send(
                        Embedded(job.id, result, "" if result is not None else "the embeddings request was cancelled")
                    )
                elif cancel is None:
                    self.send(Done(job.id, "", GenerationStats(finish_reason=FinishReason.CANCELLED)))
                else:
                    self.generate(job, cancel)
            finally:
                self.running.end(job.id)
        except Exception as exc:  # noqa: BLE001 - reported to the window, the process lives on
            message = str(exc) if _is_user_error(exc) else f"{type(exc).__name__}: {exc}"
            if not _is_user_error(exc):
                traceback.print_exc()
            self.send(self.failed(job, exc, message))

    def answer_waiting(self) -> None:
        """Between two texts of an embedding, or two batches of a long prompt: the answers queued
        behind it run now (in order, up to the first job that is not an answer: a load or another
        embedding waits its turn), so a long request does not keep a chat waiting. They run to
        their end: an answer run here does not step aside in turn."""
        self.aside += 1
        try:
            while self.answer_waits():
                job = self.jobs.get()  # the head seen: only this thread takes jobs
                if job is not None:
                    self.run(job)
        finally:
            self.aside -= 1

    def answer_waits(self) -> bool:
        """An answer is at the head of the queue."""
        with self.jobs.mutex:  # a look at the queue's head without taking it
            return bool(self.jobs.queue) and isinstance(self.jobs.queue[0], Generate)

    def answer_events(self, request: GenerateRequest, cancel: threading.Event) -> Iterator[Event]:
        """The engine's events for this answer; its prompt steps aside for the answers waiting
        (step_aside.py) unless it runs aside itself or the target keeps no prompt cache."""
        target = self.engine.target
        may_step_aside = not self.aside and target is not None and target.options.prompt_cache_mb > 0
        return stepping_aside(
            lambda: self.engine.generate(request, cancel),
            lambda: may_step_aside and self.answer_waits(),
            self.answer_waiting,
        )

    def load(self, job: Load) -> None:
        from desktop_app.engine import IncompatibleDraftError, default_model_path

        # "" is the embedded default model, resolved here so the window never imports llama.cpp
        target = job.target or str(default_model_path())
        self.send(Loading("target", target))
        progress = LoadProgress(self.send, "target")
        self.engine.load_target(target, job.target_options, progress=progress)
        progress.done()
        compatibility = None
        draft_error = None
        if job.draft:
            self.send(Loading("draft", job.draft))
            progress = LoadProgress(self.send, "draft")
            try:
                verdict = self.engine.load_draft(job.draft, job.draft_options, progress=progress)
                progress.done()
                compatibility = verdict.summary()
            except IncompatibleDraftError as exc:
                draft_error = "; ".join(exc.reasons)
            except Exception as exc:  # noqa: BLE001 - the target still works without the draft
                draft_error = str(exc)
        else:
            self.engine.unload_draft()
        self.send(Loaded(self.engine.loaded(draft_error=draft_error, compatibility=compatibility)))
        # Auto mode's cost measurement (about a second) now, while the user types, instead of
        # in the first answer. A later message simply waits in the job queue.
        self.measuring.after_load(job.plan)
        # The n-gram cache learns the history in the background (not beside the measurement:
        # its Python work would skew the timings).
        self.history = Path(job.history) if job.history else None
        self.history_changed(HistoryChanged())

    def failed(self, job: Load | Generate | Embed, exc: BaseException, message: str) -> EngineEvent:
        """The event that tells the window this job failed."""
        if isinstance(job, Load):
            return self.load_failed(job, exc, message)
        if isinstance(job, Embed):
            return Embedded(job.id, None, message, _is_user_error(exc))
        return Failed(job.id, message, _is_user_error(exc))

    def load_failed(self, job: Load, exc: BaseException, message: str) -> LoadFailed:
        """What the window needs after a failed load: why, what is still loaded, and whether the
        target file itself is at fault (the window then stops offering it)."""
        from desktop_app.engine import EngineError, ModelLoadError, ModelNotFoundError

        try:
            models = self.engine.loaded()
        except EngineError:  # no target is loaded
            models = None
        file_at_fault = isinstance(exc, (ModelLoadError, ModelNotFoundError)) and bool(job.target)
        return LoadFailed(message, models, job.target if file_at_fault else None)

    def history_changed(self, command: HistoryChanged) -> None:
        if self.history is not None:
            self.history_ngrams.request(self.history, forget_session=command.deleted)

    def generate(self, job: Generate, cancel: threading.Event) -> None:
        request_id, request = job.id, job.request
        fmt = self.engine.prompts.tools.format if request.tools and not job.raw else None
        calls = ToolAnswer(fmt) if fmt is not None else None  # the calls' syntax is not shown, they come parsed
        pieces: list[Piece] = []
        every = STREAM_FLUSH_S if job.raw else CHUNK_FLUSH_S
        last_flush = 0.0  # the first text goes out at once; then at most every ``every``
        last_read = float("-inf")  # the prompt's progress: the first at once, then as often as load progress
        last_stats = float("-inf")

        def flush() -> None:
            nonlocal last_flush
            if pieces:
                self.send(Pieces(request_id, tuple(pieces)))
                pieces.clear()
            last_flush = time.perf_counter()

        for event in self.answer_events(request, cancel):
            if isinstance(event, PromptProgress):
                if time.perf_counter() - last_read >= PROGRESS_INTERVAL_S:
                    last_read = time.perf_counter()
                    self.send(PromptRead(request_id, event))
            elif isinstance(event, TextChunk):
                shown = calls.shown(event) if calls is not None else event
                if shown is None:
                    continue
                add_piece(pieces, shown)
                if time.perf_counter() - last_flush >= every:
                    flush()
            elif isinstance(event, StatsUpdate):
                if time.perf_counter() - last_stats >= LIVE_STATS_S:
                    last_stats = time.perf_counter()
                    flush()
                    self.send(LiveStats(request_id, event.stats))
            elif isinstance(event, Finished):
                flush()
                text, made = calls.finish(event.text) if calls is not None else (event.text, ())
                self.send(Done(request_id, text, event.stats, made))
                self._remember_speed(event.stats)

    def _remember_speed(self, stats: GenerationStats) -> None:
        target = self.engine.target
        if target is not None:
            from desktop_app.engine.llama.model import runs_on_cpu

            on_cpu = not target.options.workers and runs_on_cpu(target.options)
            self.speeds.remember(target.path, target.info.file_size, not on_cpu, stats)

    # ------------------------------------------------------------------ main loop
    def on_fatal(self, message: str) -> None:
        """llama.cpp is ending the process (called from its thread): tell the window why."""
        self.send(Fatal(message))

    def workers(self) -> tuple[WorkerAddress, ...]:
        target = self.engine.target
        return target.options.workers if target is not None else ()

    def serve(self) -> None:
        from desktop_app.engine.llama import rpc

        rpc.on_fatal(self.on_fatal, self.workers)
        backend = self.engine.backend()
        gpus = [d for d in backend.devices if d.kind != "cpu"]
        device = gpus[0].description if gpus else (backend.devices[0].description if backend.devices else "CPU")
        self.send(Ready(os.getpid(), backend.summary(), backend.name, device, backend.build_warning()))
        jobs = threading.Thread(target=self.run_jobs, name="engine-jobs", daemon=True)
        jobs.start()
        while True:
            try:
                command = self.conn.recv()
            except (EOFError, OSError):
                break
            if isinstance(command, Cancel):
                self.running.cancel(command.id)
            elif isinstance(command, HistoryChanged):
                self.history_changed(command)
            elif isinstance(command, CountPrompt):
                self.counter.request(command)
            elif isinstance(command, Shutdown):
                break
            elif isinstance(command, (Load, Generate, Embed)):
                self.jobs.put(command)
        self.running.cancel_all()
        self.jobs.put(None)
        jobs.join(timeout=1.0)  # a generation stops within one cycle; a long decode may not
        if jobs.is_alive():
            # A native decode is still running (a big prompt, a busy machine): freeing the
            # models under it would be unsafe, and the process is ending anyway.
            os._exit(0)
        self.counter.close()
        self.history_ngrams.close()
        self.engine.close()


def _is_user_error(exc: BaseException) -> bool:
    from desktop_app.engine import EngineError

    return isinstance(exc, (EngineError, ValueError, FileNotFoundError))


def serve(conn: Connection) -> None:
    """The child process's entry point (``multiprocessing`` spawn target)."""
    # numpy's OpenBLAS would start (and spin) a thread per core on import; the engine only does
    # small vector work in numpy, and those cores belong to llama.cpp and the window.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # Ctrl+C in a terminal reaches the whole process group: the parent (the window, `specchat
    # serve`) decides, and stops this process with Shutdown; a traceback here would only confuse.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _Worker(conn).serve()
