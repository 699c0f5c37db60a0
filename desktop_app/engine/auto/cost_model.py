"""What a target pass of b rows and a drafted token cost on this machine, as Auto plans with them.

Measured at load time (``timing``), then followed as generation runs: a drift in load rescales
every cost at once, small drifts move their level slowly, and verify passes bend the table's
shape only slowly towards what they keep costing in answers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

LOAD_DRIFT = 1.25  # target passes this much slower (or faster) than the costs say: rescale them all
LOAD_PASSES = 4  # passes whose mean drift is compared (a step in load is followed after these)
LOAD_SHOWN = 1.2  # costs this far from the calibration are named in the reason
LEVEL_WEIGHT = 0.05  # each pass moves the level of all target costs this far towards what it measured
SHAPE_WEIGHT = 0.02  # each verify pass moves its own size's cost this far (in log) towards what it cost
# (with passes scattered by 30%, Auto then drafts at 99.6% of the speed steady costs give it)
SHAPE_CLIP = 0.25  # ... by at most this log-ratio


@dataclass
class CostModel:
    """Seconds per target decode of b tokens (index b - 1) and per drafted token."""

    target_batch_s: list[float]
    draft_token_s: float
    load: float = 1.0  # costs now over the calibrated ones: > 1 when the machine got busier
    measured: bool = True  # False: given costs (another machine's), used as they stand
    by_threads: dict[int, list[float]] = field(default_factory=dict)  # target_batch_s per thread count
    threads: int = 0  # the count target_batch_s is for (0: not known)
    _drift: list[float] = field(default_factory=list)  # log(measured / cost) of the latest passes
    _pending: tuple[int, float] | None = None  # a verify pass (rows, seconds) awaiting the pass after it

    @property
    def k_max(self) -> int:
        return len(self.target_batch_s) - 1

    def cycle_s(self, k: int) -> float:
        return k * self.draft_token_s + self.target_batch_s[k]

    def update_target(self, batch: int, seconds: float, weight: float = 0.1) -> None:
        if 1 <= batch <= len(self.target_batch_s):
            old = self.target_batch_s[batch - 1]
            self.target_batch_s[batch - 1] = (1 - weight) * old + weight * seconds

    def update_draft(self, per_token_s: float, weight: float = 0.1) -> None:
        self.draft_token_s = (1 - weight) * self.draft_token_s + weight * per_token_s

    def use_threads(self, count: int) -> None:
        """The engine now computes with ``count`` threads: plan with the batch costs measured at
        that count (as the machine's load has scaled them since), keeping these for a return."""
        if count == self.threads or count not in self.by_threads:
            return
        if self.threads:
            self.by_threads[self.threads] = list(self.target_batch_s)
        self.target_batch_s = list(self.by_threads[count])
        self.threads = count
        self._drift = []
        self._pending = None

    def follow(self, batch: int, seconds: float) -> None:
        """A target pass measured while generating. When passes drift from these costs (load came
        or went, the thread count changed), every cost is rescaled at once, the batch sizes and
        the draft not measured lately too; otherwise the level of the target's costs follows
        slowly. Their shape (what k rows cost against one) is the hardware's and the model's,
        measured with repetitions while one pass is noisy, so it bends only slowly, towards what
        verify passes of each size keep costing in answers.

        A verify pass of b rows is judged with the one-token pass after it, which rebuilds
        llama.cpp's graph: the calibration charged that rebuild to b rows, not to plain decoding
        (judged alone, that pass would make plain decoding look dearer, and drafts cheaper)."""
        if not self.measured or not 1 <= batch <= len(self.target_batch_s) or seconds <= 0:
            self._pending = None
            return
        pending, self._pending = self._pending, None
        if batch > 1:
            if pending is not None:  # two verify passes in a row: the first is judged alone
                self._level(math.log(pending[1] / self.target_batch_s[pending[0] - 1]))
            self._pending = (batch, seconds)
            return
        if pending is None:
            self._level(math.log(seconds / self.target_batch_s[0]))
            return
        rows, verify_s = pending
        if self._level(math.log((verify_s + seconds) / (self.target_batch_s[rows - 1] + self.target_batch_s[0]))):
            return
        # The pair's cost beyond plain decoding's token, against what the calibration said
        # b rows cost (on this 2-core CPU 4- and 6-row passes cost 8% and 18% more in answers
        # than timed back to back): clipped, as a stall is the machine's and not the size's.
        step = math.log(max(verify_s + seconds - self.target_batch_s[0], 1e-9) / self.target_batch_s[rows - 1])
        self.target_batch_s[rows - 1] *= math.exp(SHAPE_WEIGHT * min(max(step, -SHAPE_CLIP), SHAPE_CLIP))

    def _level(self, drift_now: float) -> bool:
        """Follow one observation of log(measured / cost); True when it rescaled every cost."""
        self._drift = [*self._drift[-(LOAD_PASSES - 1) :], drift_now]
        drift = sum(self._drift) / len(self._drift)
        if len(self._drift) == LOAD_PASSES and abs(drift) > math.log(LOAD_DRIFT):
            factor = math.exp(drift)
            self.target_batch_s = [s * factor for s in self.target_batch_s]
            self.draft_token_s *= factor
            self.load *= factor
            self._drift = []
            return True
        # Small drifts move the whole table a little: refining one batch size from one pass
        # lets a noisy machine bend the table's shape, and Auto's k follows the noise. The
        # draft's cost moves with it, as in a rescale: moved only by rescales, a stall that
        # faded slowly left it raised, and after 50,000 passes on a noisy machine a lookup
        # cost a second a token and Auto never drafted again (the bench, from its 4th round).
        factor = math.exp(LEVEL_WEIGHT * drift_now)
        self.target_batch_s = [s * factor for s in self.target_batch_s]
        self.draft_token_s *= factor
        self.load *= factor
        return False

    def load_note(self) -> str:
        """How far the costs moved from the calibration, when it shows ("" otherwise). Load is
        one cause, a context deeper or shallower than the calibration's another: not named."""
        if self.load >= LOAD_SHOWN or self.load <= 1 / LOAD_SHOWN:
            return f"target passes now cost {self.load:.1f}x the calibration"
        return ""
