"""Generation statistics: per answer, live, and a sliding-window speed for the gauge."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field, fields
from typing import Any

from desktop_app.engine.api import NO_DRAFTER, DrafterKind, FinishReason, NoDrafter, SpecMode, drafter_named

PER_CYCLE = ("k_history", "cycles")  # per-cycle records: in the engine's stats, not in their dict
MIN_PLAIN_PASSES = 4  # plain passes an answer needs before its measured speed-up is given


class SpeedWindow:
    """Tokens per second over the last ``window_s`` seconds of a stream."""

    def __init__(self, window_s: float = 1.0) -> None:
        self.window_s = window_s
        self._events: deque[tuple[float, int]] = deque()

    def add(self, n_tokens: int, now: float | None = None) -> None:
        now = time.perf_counter() if now is None else now
        self._events.append((now, n_tokens))
        while len(self._events) > 2 and now - self._events[1][0] > self.window_s:
            self._events.popleft()

    def rate(self, now: float | None = None) -> float:
        if len(self._events) < 2:
            return 0.0
        now = time.perf_counter() if now is None else now
        start = self._events[0][0]
        span = max(now, self._events[-1][0]) - start
        tokens = sum(n for _, n in list(self._events)[1:])
        return tokens / span if span > 0 else 0.0


@dataclass
class GenerationStats:
    """What one answer cost and how speculation did. ``to_dict`` is the CLI/JSON shape (the
    enums as their words); plain words given for the enum fields become their members."""

    mode: SpecMode = SpecMode.OFF
    drafter: DrafterKind | NoDrafter = NO_DRAFTER  # the drafter that drafted most of the answer
    draft_max: int = 0
    k_current: int = 0
    prompt_tokens: int = 0
    prompt_tokens_new: int = 0
    dropped_turns: int = 0
    prefill_s: float = 0.0
    ttft_s: float = 0.0  # to the first answer text: from the answer's start here, from Send in the window
    engine_ttft_s: float = 0.0  # where a window measured ttft_s from Send: the engine's own figure
    generated_tokens: int = 0
    decode_s: float = 0.0
    target_passes: int = 0
    drafted: int = 0
    accepted: int = 0
    draft_s: float = 0.0
    verify_s: float = 0.0
    # One-token target passes that followed a one-token pass (no graph rebuild after a verify
    # pass) and their seconds: what plain decoding costs per token, measured in this answer.
    plain_passes: int = 0
    plain_s: float = 0.0
    window_tokens_per_s: float = 0.0
    finish_reason: FinishReason | None = None
    stop_string: str = ""  # the request's stop string that ended the answer ("" when none did)
    auto_reason: str = ""
    threads: str = ""  # the CPU threads in use and why ("1 thread: machine busy"; engine/threads.py)
    # The reasoning section's share (engine/loop/reasoning_count.py): its tokens, the drafts made
    # and accepted while it was open, and the seconds from the first token to its end.
    thinking_tokens: int = 0
    thinking_drafted: int = 0
    thinking_accepted: int = 0
    thinking_s: float = 0.0
    k_history: list[int] = field(default_factory=list)  # k chosen per cycle
    cycles: list[tuple[int, int]] = field(default_factory=list)  # (drafted, accepted) per cycle
    by_drafter: dict[str, tuple[int, int]] = field(default_factory=dict)  # DrafterKind value -> (drafted, accepted)

    def __post_init__(self) -> None:
        self.mode = SpecMode(self.mode)
        self.drafter = drafter_named(self.drafter)
        if self.finish_reason is not None:
            self.finish_reason = FinishReason(self.finish_reason)

    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.drafted if self.drafted else 0.0

    @property
    def tokens_per_pass(self) -> float:
        return self.generated_tokens / self.target_passes if self.target_passes else 0.0

    @property
    def measured_speedup(self) -> float:
        """How many times faster than plain decoding this answer's tokens came, as the engine
        measured it: the answer's tokens at its own plain passes' cost per token, over the time
        its passes and drafts took (both timed the same way); 0.0 when it drafted nothing or had
        too few plain passes to know what plain decoding costs."""
        spent = self.verify_s + self.draft_s
        if not self.drafted or self.plain_passes < MIN_PLAIN_PASSES or spent <= 0:
            return 0.0
        return self.generated_tokens * (self.plain_s / self.plain_passes) / spent

    @property
    def decode_tokens_per_s(self) -> float:
        return self.generated_tokens / self.decode_s if self.decode_s > 0 else 0.0

    @property
    def answer_tokens_per_s(self) -> float:
        """The answer's speed, live and final, as the window shows it (its footer, the speed
        panel's dial): its tokens over its decoding seconds so far; the last second's rate
        only before decoding was timed."""
        return self.decode_tokens_per_s or self.window_tokens_per_s

    def to_dict(self) -> dict[str, Any]:
        # Not asdict: it deep-copies the per-cycle lists only to drop them, and the window asks
        # for this ten times a second: at 2,000 tokens that was a fifth of its CPU while streaming.
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in PER_CYCLE}
        data["by_drafter"] = {kind: tuple(pair) for kind, pair in self.by_drafter.items()}
        data.update(
            mode=self.mode.value,
            drafter=self.drafter.value,
            finish_reason=None if self.finish_reason is None else self.finish_reason.value,
            acceptance_rate=round(self.acceptance_rate, 4),
            tokens_per_pass=round(self.tokens_per_pass, 4),
            decode_tokens_per_s=round(self.decode_tokens_per_s, 3),
            measured_speedup=round(self.measured_speedup, 3),
        )
        timed = (
            "prefill_s",
            "ttft_s",
            "engine_ttft_s",
            "decode_s",
            "draft_s",
            "verify_s",
            "plain_s",
            "window_tokens_per_s",
            "thinking_s",
        )
        for key in timed:
            data[key] = round(data[key], 5)
        return data


# The figures that add up over the runs of one answer (an answer continued: GenerateRequest.
# continue_answer); the others are the last run's, but for the time to the first token (the first's).
SUMMED = (
    "generated_tokens", "decode_s", "target_passes", "drafted", "accepted", "draft_s", "verify_s", "plain_passes",
    "plain_s", "thinking_tokens", "thinking_drafted", "thinking_accepted", "thinking_s",
)  # fmt: skip
FIRST_RUN = ("ttft_s", "engine_ttft_s")


def continued_stats(before: dict[str, Any] | None, after: dict[str, Any]) -> dict[str, Any]:
    """An answer's figures (dicts, as :meth:`GenerationStats.to_dict` and the history have them)
    after a continuation's ``after``: counts and times summed, speeds computed again from them,
    why it ended as the continuation ended. ``after`` alone when either has no figures to add."""
    if not before or "generated_tokens" not in before or "generated_tokens" not in after:
        return after
    names = {f.name for f in fields(GenerationStats)}
    first, last = (GenerationStats(**{k: v for k, v in d.items() if k in names}) for d in (before, after))
    for name in SUMMED:
        setattr(last, name, getattr(first, name) + getattr(last, name))
    for name in FIRST_RUN:
        setattr(last, name, getattr(first, name))
    drafters = dict(first.by_drafter)
    for kind, (drafted, accepted) in last.by_drafter.items():
        old = drafters.get(kind, (0, 0))
        drafters[kind] = (old[0] + drafted, old[1] + accepted)
    last.by_drafter = drafters
    return {**after, **last.to_dict()}
