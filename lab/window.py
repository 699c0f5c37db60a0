"""``python -m lab window``: does an answer stream as fast in the window as in the terminal?

The real window (offscreen where there is no display) with its engine process, and
``specchat generate`` in a child process, answer the same message with the same settings,
interleaved round by round, each round after the machine is quiet. Reported: the decoding
tokens/s each reached (median), the window's over the CLI's (median of same-round ratios), and
the longest stretch the window's event loop spent busy (from waking to waiting again) while it
streamed: the longest a click or a key could have waited. The bench adds no timer of its own
while an answer streams: every wake-up of the window's process takes a core from the engine.
User data goes to a temporary home, not the user's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from desktop_app.bench.quiet import wait_for_quiet
from lab.report import write_report

WINDOW_VS_CLI = 0.9  # the Done-when target (issue 13)
SPEC = "off"  # plain decoding: the same work in both, nothing for Auto to decide differently
ANSWER_TIMEOUT_S = 300.0


def _cli_speed(args: argparse.Namespace, prompt: str) -> float:
    command = [
        sys.executable,
        "-m",
        "desktop_app",
        "generate",
        "--prompt",
        prompt,
        "--spec",
        SPEC,
        "--max-tokens",
        str(args.max_tokens),
        "--json",
        "--ctx",
        str(args.ctx),
    ]
    if args.target:
        command += ["--target", str(args.target)]
    if args.threads:
        command += ["--threads", str(args.threads)]
    out = subprocess.run(command, capture_output=True, text=True, timeout=ANSWER_TIMEOUT_S, check=True)
    stats = json.loads(out.stdout)["stats"]
    return float(stats["generated_tokens"]) / float(stats["decode_s"])


def _beacon() -> Any:
    from PySide6.QtCore import QObject, Signal

    class Beacon(QObject):
        ended = Signal()

    return Beacon()


class WindowDriver:
    """The real window with its engine process, in a temporary home, answering as a user asks:
    :meth:`answer` sends a message in a new conversation, with the speculation mode picked in
    the side panel, and returns the answer's stats once it ends."""

    def __init__(self, args: argparse.Namespace, spec: str = SPEC) -> None:
        os.environ["SPECCHAT_HOME"] = tempfile.mkdtemp(prefix="specchat-bench-window-")
        if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        from PySide6.QtWidgets import QApplication

        from desktop_app.store import History, Settings
        from desktop_app.ui.main_window import MainWindow

        self.app = QApplication.instance() or QApplication(sys.argv[:1])
        settings = Settings.load()
        settings.set("target_path", str(args.target or ""))
        settings.set("spec_mode", spec)
        settings.set("max_tokens", args.max_tokens)
        settings.set("n_ctx", args.ctx)
        settings.set("n_threads", args.threads or 0)
        settings.save()
        self.history = History()
        self.window = MainWindow(Settings.load(), self.history)
        self.window.resize(1100, 800)
        self.window.show()
        loaded: list[object] = []
        self.window.client.model_loaded.connect(loaded.append)
        self.window.start()
        self.wait(lambda: bool(loaded))
        time.sleep(2.0)  # Auto's cost measurement runs right after a load
        self.busy: list[float] = []  # the event loop's busy stretches while answering (seconds)
        self.cpu: list[float] = []  # the window process's CPU time per second of decoding
        self._woke: float | None = None
        self._beacon = _beacon()  # its signal ends a wait at once (an answer ended)
        self._ended = self._beacon.ended

    def _awake(self) -> None:
        self._woke = time.perf_counter()

    def _about_to_block(self) -> None:
        if self._woke is not None:
            self.busy.append(time.perf_counter() - self._woke)
            self._woke = None

    def _watch_busy(self, on: bool) -> None:
        """Time the event loop's busy stretches through its dispatcher's own signals (no timer)."""
        from PySide6.QtCore import QAbstractEventDispatcher

        dispatcher = QAbstractEventDispatcher.instance()
        if dispatcher is None:
            return
        if on:
            self._woke = None
            dispatcher.awake.connect(self._awake)
            dispatcher.aboutToBlock.connect(self._about_to_block)
        else:
            dispatcher.awake.disconnect(self._awake)
            dispatcher.aboutToBlock.disconnect(self._about_to_block)

    def wait(self, done: Any, woken_by: Any = None) -> None:
        """Run the event loop (sleeping between events, as the app does) until ``done()``,
        looked at when ``woken_by`` (a signal) fires, or every 0.5 s where no signal is given:
        the bench's own wake-ups would take the engine's cores as the window's do."""
        from PySide6.QtCore import QEventLoop, QTimer

        loop = QEventLoop()
        deadline = time.monotonic() + ANSWER_TIMEOUT_S
        if woken_by is not None:
            woken_by.connect(loop.quit)
        check = QTimer()
        check.setInterval(500 if woken_by is None else int(ANSWER_TIMEOUT_S * 1000))
        check.timeout.connect(lambda: loop.quit() if done() or time.monotonic() > deadline else None)
        check.start()
        loop.exec()
        check.stop()
        if woken_by is not None:
            woken_by.disconnect(loop.quit)
        if not done():
            raise TimeoutError("the window did not finish in time")

    def answer(self, prompt: str, spec: str | None = None) -> Any:
        from desktop_app.ui.engine.engine_client import GenerationHandle

        window = self.window
        if spec is not None:  # as a user picks it in the side panel (Auto is "the best drafter")
            from desktop_app.ui.speed.speculation_choice import AUTO

            mode = window.side.mode
            index = mode.findData(AUTO if spec == "auto" else spec)
            if index < 0:
                raise ValueError(f"the window offers no speculation mode {spec!r}")
            mode.setCurrentIndex(index)
        finished: list[Any] = []

        def attach(handle: GenerationHandle) -> None:
            for signal in (handle.finished, handle.failed):
                signal.connect(finished.append)
                signal.connect(lambda *_: self._ended.emit())

        window.client.generation_started.connect(attach)
        window.session.open(None)  # a new conversation: the same prompt as the CLI's
        cpu = time.process_time()
        self._watch_busy(True)
        window.send(prompt)
        self.wait(lambda: bool(finished), self._ended)
        self._watch_busy(False)
        window.client.generation_started.disconnect(attach)
        done = finished[0]
        if isinstance(done, str):
            raise RuntimeError(f"the window's answer failed: {done}")
        self.cpu.append((time.process_time() - cpu) / float(done.stats.decode_s))
        return done

    def close(self) -> str:
        """Close the window; returns what its status bar said of the threads."""
        threads = self.window.status.threads.text()
        self.window.close()
        self.history.close()
        self.app.processEvents()
        return str(threads)


def measure(args: argparse.Namespace, prompt: str, rounds: int) -> dict[str, Any]:
    driver = WindowDriver(args)

    def window_speed() -> float:
        done = driver.answer(prompt)
        return float(done.stats.generated_tokens) / float(done.stats.decode_s)

    cli: list[float] = []
    win: list[float] = []
    for r in range(rounds + 1):  # round 0 warms up both
        wait_for_quiet(args.quiet_wait)
        pair = (
            (_cli_speed(args, prompt), window_speed())
            if r % 2 == 0
            else tuple(reversed((window_speed(), _cli_speed(args, prompt))))
        )
        print(f"round {r}: cli {pair[0]:.1f} tok/s, window {pair[1]:.1f} tok/s", file=sys.stderr, flush=True)
        if r:
            cli.append(pair[0])
            win.append(pair[1])
    threads = driver.close()
    ratio = statistics.median(w / c for w, c in zip(win, cli, strict=True))
    return {
        "model": Path(args.target).name if args.target else "the embedded default model",
        "spec": SPEC,
        "max_tokens": args.max_tokens,
        "rounds": rounds,
        "cli_tok_s": round(statistics.median(cli), 1),
        "window_tok_s": round(statistics.median(win), 1),
        "window_vs_cli": round(ratio, 3),
        "target_met": ratio >= WINDOW_VS_CLI,
        "longest_busy_ms": round(max(driver.busy, default=0.0) * 1000, 1),
        "window_threads": threads,
        "cli": cli,
        "window": win,
        "window_cpu_share": round(statistics.median(driver.cpu[1:] or driver.cpu), 3),
    }


def markdown(report: dict[str, Any]) -> str:
    return "\n".join(
        [
            f"{report['model']}, spec {report['spec']}, {report['max_tokens']} tokens, median of {report['rounds']} "
            "rounds (ratio: median of same-round ratios)",
            "",
            "| `specchat generate` tok/s | window tok/s | window / CLI | window's longest busy stretch "
            "| window's CPU while streaming | window's threads | target |",
            "|---|---|---|---|---|---|---|",
            f"| {report['cli_tok_s']:.1f} | {report['window_tok_s']:.1f} | {report['window_vs_cli']:.2f}x | "
            f"{report['longest_busy_ms']:.0f} ms | {report['window_cpu_share']:.0%} of a core | "
            f"{report['window_threads']} | " + ("met" if report["target_met"] else "**missed**") + " |",
        ]
    )


def run(args: argparse.Namespace, prompt: str) -> int:
    report = measure(args, prompt, max(args.repeats, 3))
    write_report(args.out, "window", report, markdown(report))
    return 0
