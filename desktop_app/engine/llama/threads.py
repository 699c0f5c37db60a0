"""How many CPU threads llama.cpp computes with: measured on the live model, not assumed.

llama.cpp's threads meet at a barrier after every step of the compute graph. When the scheduler
gives one of their cores to another process (a browser, an editor, a neighbour's benchmark, our
own window drawing the answer), every step waits for the thread that lost its core: measured
here on 2 cores, one busy background process made 2 threads up to 10x slower than 1 thread
(README, "Fast on a busy desktop"). Idle, the same machine is fastest with both cores. So:

- at calibration (with Auto's cost measurement) the candidate counts are timed in interleaved
  rounds on the live model, and the fastest is kept;
- without a calibration (plain decoding, no Auto), the first passes of the first answer run
  a trial instead;
- unless an earlier process measured this model on this machine at the load there is now: it
  starts at that count, with no trial (``recall``; the figures are kept by ``thread_memory``);
- while generating, every target pass is compared with what this count did recently for the
  same batch size; when the recent passes (their mean: under load a count's passes are mostly
  fine with a few long stalls, and the stalls are what the answer waits for) depart from it by ``DRIFT`` (load came or went), and
  otherwise every ``probe_every_s`` seconds of decoding (backing off while nothing changes), a *trial* runs the
  next one-token passes at each candidate in turn and keeps the fastest (a verify pass of several
  rows keeps the count in use: at a slower count it loses several tokens' time; on 2 idle cores
  one thread took 77 ms for a 7-row verify pass against 45, and 17 ms for one token against 10.5);
- the count changes without a reload (``llama_set_n_threads``, through ``apply``).

A count the user set (Settings, ``--threads``) is used as is. Every context the engine decodes is
called from one thread, so they share one OpenMP team: the draft's and the target's threads never
spin against each other. This module has no llama.cpp in it (``apply`` does the setting).
"""

from __future__ import annotations

import math
import os
import statistics
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

DRIFT = 1.4  # recent passes this much slower (or faster) than this count's usual: re-measure
COLLAPSE = 2.5  # this much slower: re-measure at once, however recent the last trial
RECENT = 8  # passes whose mean is compared with the usual
ABANDON = 2.0  # a candidate this much slower than the current count in a trial is dropped from it
SWITCH_GAIN = 1.1  # another count must be this much faster than the current one to be switched to
# (under load a count's few trial passes can be lucky; switching on a coin toss costs stalls)
SLOT = 3  # passes per candidate in a trial slot; the first one settles the new count and is not scored
TRIAL_ROUNDS = 2  # slots per candidate in a trial, interleaved
# Seconds of decoding between trials, doubling while trials keep the count (a noisy machine drifts
# often; a trial that finds nothing better should not run again soon). In seconds, not passes:
# what a probe costs under load is a scheduler stall of a few ms, whatever the model's speed.
PROBE_EVERY_S = 0.5
PROBE_EVERY_MAX_S = 8.0  # back to more threads within a few seconds of decoding after load leaves
PROBE_SHARE = 0.01  # and never more often than keeps the last trial's losing passes under 1% of the time
# (with 2 busy processes one pass at 2 threads took up to 400 ms on 2 cores: probes then wait 40 s)
USUAL_WEIGHT = 0.1  # how fast "this count's usual" follows the passes that do not drift


def default_threads(cores: int | None = None) -> int:
    """The most threads worth trying: every core on small machines (2 cores, idle: 143 tok/s vs
    89 with one); bigger machines keep a core or two for the window and the desktop."""
    cores = cores or os.cpu_count() or 1
    return cores if cores <= 4 else cores - 1 if cores <= 8 else cores - 2


def thread_candidates(cores: int | None = None) -> tuple[int, ...]:
    """The counts a trial compares: 1, the powers of two below the most, and the most."""
    top = default_threads(cores)
    counts = {1, top}
    n = 2
    while n < top:
        counts.add(n)
        n *= 2
    return tuple(sorted(counts))


class ThreadReason(Enum):
    """Why this count: shown after it in the status bar ("1 thread: machine busy")."""

    START = ""  # not measured yet: the most threads
    FASTEST = "fastest measured"
    FEWER_FASTER = "fastest for this model"  # fewer than the most, on a quiet machine
    BUSY = "machine busy"
    SET = "set by you"


@dataclass(frozen=True)
class ThreadsInUse:
    count: int
    reason: ThreadReason = ThreadReason.START

    def describe(self) -> str:
        text = f"{self.count} thread{'s' if self.count != 1 else ''}"
        shown = self.reason in (ThreadReason.FEWER_FASTER, ThreadReason.BUSY, ThreadReason.SET)
        return f"{text}: {self.reason.value}" if shown else text


@dataclass(frozen=True)
class Remembered:
    """A count kept in an earlier process, and why it was kept then."""

    count: int
    reason: ThreadReason


class CountMemory(Protocol):
    """Counts kept across processes for this model and machine, at the load there is now
    (:class:`desktop_app.engine.llama.thread_memory.ModelThreads`)."""

    def recall(self) -> Remembered | None: ...

    def remember(self, count: int, reason: ThreadReason) -> None: ...

    def busy(self) -> int: ...


class _Trial:
    """The passes of one trial: which count runs each, and the scores they got."""

    def __init__(self, candidates: tuple[int, ...], current: int, slowed: bool) -> None:
        # the current count first, then the others (so the first slot needs no switch); the
        # first pass of each slot pays for switching the count and is not scored
        order = [current, *(c for c in candidates if c != current)]
        self.schedule: deque[tuple[int, bool]] = deque(
            (c, i > 0) for _ in range(TRIAL_ROUNDS) for c in order for i in range(SLOT)
        )
        self.scores: dict[int, list[float]] = {c: [] for c in order}
        self.current = current
        self.slowed = slowed  # started because passes got slower (load came)
        self.seconds: dict[int, float] = {c: 0.0 for c in order}  # time spent at each count
        self.passes: dict[int, int] = {c: 0 for c in order}

    def next_count(self) -> int | None:
        return self.schedule[0][0] if self.schedule else None

    def score(self, ratio: float, seconds: float) -> None:
        count, scored = self.schedule.popleft()
        self.seconds[count] += seconds
        self.passes[count] += 1
        if scored:
            self.scores[count].append(ratio)
        current = self.scores[self.current]
        if count != self.current and current and ratio > ABANDON * statistics.fmean(current):
            # far slower than the count in use, even the pass that switched to it (2 threads with
            # a core taken: up to 10x): each more pass at it is a stall the user sees
            self.scores[count].append(ratio)
            self.schedule = deque(slot for slot in self.schedule if slot[0] != count)

    def lost_s(self, best: int) -> float:
        """What the trial's passes at other counts cost beyond the same passes at ``best``."""
        per_pass = self.seconds[best] / max(self.passes[best], 1)
        return sum(max(0.0, self.seconds[c] - self.passes[c] * per_pass) for c in self.seconds if c != best)

    def winner(self) -> tuple[int, float]:
        # the mean, not the median: under load a count's passes are mostly fine with a few long
        # stalls (a thread waiting for its core), and the stalls are what the answer waits for
        means = {c: statistics.fmean(s) for c, s in self.scores.items() if s}
        best = min(means, key=lambda c: means[c])
        if self.current in means and means[best] * SWITCH_GAIN > means[self.current]:
            best = self.current
        return best, means[best]


class ThreadTuner:
    """Chooses and follows the thread count (see the module). ``apply(n, batch)`` sets it on
    every context: ``n`` for one-token decodes, ``batch`` for larger ones (they differ only during
    a trial); ``fixed`` is the count the user set (None: measured); ``memory`` keeps the counts
    measured across processes (:meth:`recall`)."""

    def __init__(
        self,
        apply: Callable[[int, int], None],
        candidates: tuple[int, ...] | None = None,
        fixed: int | None = None,
        memory: CountMemory | None = None,
    ) -> None:
        self._apply = apply  # (one-token count, batch count)
        self.candidates = (fixed,) if fixed else (candidates or thread_candidates())
        self._memory = memory if len(self.candidates) > 1 else None
        self._recalled = False
        self.remembered = False  # the count stands from an earlier process's measurement
        self.count = self.candidates[-1]  # what the next one-token pass runs at
        self.batch_count = self.count  # and a larger one: the count that stands, even in a trial
        self.reason = ThreadReason.SET if fixed else ThreadReason.START
        self.quiet_count: int | None = None  # the calibration's choice
        self._usual: dict[int, float] = {}  # batch size -> seconds per pass at this count, lately
        self._recent: deque[float] = deque(maxlen=RECENT)  # recent passes / usual
        self._trial: _Trial | None = None
        self._since_trial = 0  # passes
        self._since_trial_s = 0.0  # and seconds of them
        self.probe_every_s = PROBE_EVERY_S
        self._confirm: int | None = None  # more threads won a trial while busy: the next must agree
        self.trials = 0  # how many ran (for the stats and tests)

    @property
    def adaptive(self) -> bool:
        return len(self.candidates) > 1

    @property
    def in_use(self) -> ThreadsInUse:
        """The count in use and why (during a trial: the count it started from)."""
        return ThreadsInUse(self._trial.current if self._trial is not None else self.count, self.reason)

    def _set(self, count: int, batch_count: int | None = None) -> None:
        batch_count = batch_count or count
        if (count, batch_count) != (self.count, self.batch_count):
            self._apply(count, batch_count)
            self.count, self.batch_count = count, batch_count

    # ------------------------------------------------------------------ at load
    def recall(self) -> None:
        """Before the first pass that needs a count: start at the one an earlier process measured
        for this model at the load there is now, if any. It stands as if a trial had just kept
        it (no trial for a short answer; probes at the longest back-off). Once per tuner.

        With nothing remembered at this load, it starts at the cores other processes leave free
        (a thread on a core another process holds stalls every step: 2 threads beside one busy
        loop on 2 cores ran up to 10x slower than 1), and the first passes' trial measures."""
        if self._memory is None or self._recalled or self.quiet_count is not None:
            return
        self._recalled = True
        kept = self._memory.recall()
        if kept is None or kept.count not in self.candidates:
            free = max(1, (os.cpu_count() or 1) - self._memory.busy())
            fitting = [c for c in self.candidates if c <= free]
            if fitting and fitting[-1] < self.count:
                self._set(fitting[-1])
                self.reason = ThreadReason.BUSY
            return
        self._set(kept.count)
        self.quiet_count = kept.count
        self.reason = kept.reason
        self.remembered = True
        self.probe_every_s = PROBE_EVERY_MAX_S

    def _keep(self) -> None:
        """Write the count that stands now for the next process (at the load there is now)."""
        if self._memory is not None:
            self._memory.remember(self.count, self.reason)

    def calibrate(self, time_pass: Callable[[], float], rounds: int = 3) -> None:
        """Time ``time_pass`` (one decode, seconds) at each candidate in interleaved rounds;
        keep the fastest. The first pass at each count is a warm-up."""
        if not self.adaptive:
            return
        samples: dict[int, list[float]] = {c: [] for c in self.candidates}
        for _ in range(rounds):
            for count in self.candidates:
                self._set(count)
                time_pass()
                samples[count].append(time_pass())
        means = {c: statistics.fmean(s) for c, s in samples.items()}
        best = min(means, key=lambda c: means[c])
        self._set(best)
        self.quiet_count = best
        self.reason = ThreadReason.FASTEST if best == self.candidates[-1] else ThreadReason.FEWER_FASTER
        self._usual.clear()
        self._recent.clear()
        self._since_trial = 0
        self._since_trial_s = 0.0
        self._keep()

    # ------------------------------------------------------------------ while generating
    def observe(self, batch: int, seconds: float) -> None:
        """One target pass of ``batch`` rows took ``seconds`` at the current count."""
        if not self.adaptive or seconds <= 0:
            return
        usual = self._usual.get(batch)
        if usual is None:  # the first pass of this size at this count sets its usual
            self._usual[batch] = seconds
            self._next()
            return
        ratio = seconds / usual
        if self._trial is not None:
            if batch > 1:
                return  # it ran at the count in use: the trial goes on at the next one-token pass
            self._trial.score(ratio, seconds)
            self._next()
            return
        self._recent.append(ratio)
        self._since_trial += 1
        self._since_trial_s += seconds
        if len(self._recent) == RECENT:
            drift = statistics.fmean(self._recent)
            due = drift > COLLAPSE or self._since_trial_s >= self.probe_every_s / 2  # sooner than a probe
            # slower at the fewest threads: fewer cannot help (more is what the probes try)
            helps = drift < 1 / DRIFT or (drift > DRIFT and self.count > self.candidates[0])
            if due and helps:
                self._start(slowed=drift > 1)
                return
        never_measured = self.quiet_count is None and self._since_trial >= RECENT
        if never_measured or self._since_trial_s >= self.probe_every_s:
            self._start(slowed=False)
            return
        if abs(math.log(ratio)) < math.log(DRIFT):
            self._usual[batch] = (1 - USUAL_WEIGHT) * usual + USUAL_WEIGHT * seconds

    def _start(self, slowed: bool) -> None:
        self._trial = _Trial(self.candidates, self.count, slowed)
        self._recent.clear()
        self._next()

    def _next(self) -> None:
        """Set the count for the next pass: the trial's, or its winner once it is over."""
        trial = self._trial
        if trial is None:
            return
        count = trial.next_count()
        if count is not None:
            self._set(count, trial.current)
            return
        self._finish(trial)

    def _finish(self, trial: _Trial) -> None:
        before = trial.current
        best, ratio = trial.winner()
        confirming = best > before and self.reason is ThreadReason.BUSY and self._confirm != best
        if confirming and trial.scores[before]:
            # More threads while the machine was busy: a few lucky passes can say so (a stalled
            # thread shows only now and then), so a second trial, soon, must agree first.
            self._confirm = best
            best, ratio = before, statistics.fmean(trial.scores[before])
        else:
            confirming = False
            self._confirm = None
        self._trial = None
        self.remembered = False  # measured in this process now
        self.trials += 1
        if self.quiet_count is None:  # no calibration ran: the first trial stands for it
            self.quiet_count = best
        self._since_trial = 0
        self._since_trial_s = 0.0
        self._set(best)
        # what this count costs now, per batch size, from the trial's scores (ratios to the old usual)
        self._usual = {b: s * ratio for b, s in self._usual.items()}
        self.probe_every_s = min(self.probe_every_s * 2, PROBE_EVERY_MAX_S) if best == before else PROBE_EVERY_S
        self.probe_every_s = max(self.probe_every_s, trial.lost_s(best) / PROBE_SHARE)
        if confirming:
            self.probe_every_s = PROBE_EVERY_S
        top = self.candidates[-1]
        if best == top:
            self.reason = ThreadReason.FASTEST
        elif trial.slowed or self.reason is ThreadReason.BUSY or (self.quiet_count or top) > best:
            self.reason = ThreadReason.BUSY
        else:
            self.reason = ThreadReason.FEWER_FASTER
        self._keep()
