"""What a target pass of b rows and a drafted token cost on this machine, as Auto plans with them.

The calibrated table (``timing``, at load time) times one level: each pass measured while
generating moves the level of every cost towards what it cost, at the tunables' ``decay``. The
table's shape (what b rows cost against one) is the hardware's and the model's, timed with
repetitions, while one pass in an answer is noisy: it is not bent by single passes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop_app.engine.auto.tunables import DEFAULT_TUNABLES, AutoTunables


@dataclass
class CostModel:
    """Seconds per target decode of b tokens (index b - 1) and per drafted token."""

    target_batch_s: list[float]
    draft_token_s: float
    load: float = 1.0  # costs now over the calibrated ones: > 1 when the machine got busier
    measured: bool = True  # False: given costs (another machine's), used as they stand
    by_threads: dict[int, list[float]] = field(default_factory=dict)  # target_batch_s per thread count
    threads: int = 0  # the count target_batch_s is for (0: not known)
    tunables: AutoTunables = DEFAULT_TUNABLES
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
        self._pending = None

    def follow(self, batch: int, seconds: float) -> None:
        """A target pass measured while generating moves the level of every cost (the batch
        sizes and the draft not measured lately too) towards what it cost: load came or went,
        the thread count changed, the context grew.

        A verify pass of b rows is judged with the one-token pass after it, which rebuilds
        llama.cpp's graph: the calibration charged that rebuild to b rows, not to plain decoding
        (judged alone, that pass would make plain decoding look dearer, and drafts cheaper)."""
        if not self.measured or not 1 <= batch <= len(self.target_batch_s) or seconds <= 0:
            self._pending = None
            return
        pending, self._pending = self._pending, None
        if batch > 1:
            if pending is not None:  # two verify passes in a row: the first is judged alone
                self._level(pending[1] / self.target_batch_s[pending[0] - 1])
            self._pending = (batch, seconds)
            return
        if pending is None:
            self._level(seconds / self.target_batch_s[0])
            return
        rows, verify_s = pending
        self._level((verify_s + seconds) / (self.target_batch_s[rows - 1] + self.target_batch_s[0]))

    def _level(self, ratio: float) -> None:
        """Move every cost, in log, ``1 - decay`` of the way to ``ratio`` times itself. The
        draft's cost moves with the target's: moved apart, a stall that faded slowly left it
        raised, and after 50,000 passes on a noisy machine a lookup cost a second a token and
        Auto never drafted again (the bench, from its 4th round)."""
        factor = ratio ** (1.0 - self.tunables.decay)
        self.target_batch_s = [s * factor for s in self.target_batch_s]
        self.draft_token_s *= factor
        self.load *= factor

    def load_note(self) -> str:
        """How far the costs moved from the calibration, when it shows at one decimal ("" while
        it reads 1.0x). Load is one cause, a context deeper or shallower than the calibration's
        another: not named."""
        if round(self.load, 1) != 1.0:
            return f"target passes now cost {self.load:.1f}x the calibration"
        return ""
