"""What a target pass of b rows and a drafted token cost on this machine, as Auto plans with them.

The table (measured by a calibration, remembered from an earlier process, or a prior) times one
level: each pass measured while generating moves the level of every cost towards what it cost,
at the tunables' ``decay``. The table's shape (what b rows cost against one) is the hardware's
and the model's. A size timed with repetitions is not bent by single noisy passes; a size known
only from the prior (``seen`` 0) takes the mean of the first passes that measure it, up to
``1 / (1 - decay)`` of them, and then stands like a calibrated one (docs/auto.md, "Costs").
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
    # passes behind each size's cost (index b - 1): a calibration's sizes count as fully seen; a
    # prior's as none (empty: every size fully seen)
    seen: list[float] = field(default_factory=list)
    # passes behind the level while it is thin (a prior's: its first passes set it, as their
    # mean, up to fully_seen of them); None: a measured table's, which follows at ``decay``
    level_seen: float | None = None
    learned: bool = False  # a pass moved these costs since they were last kept
    _pending: tuple[int, float] | None = None  # a verify pass (rows, seconds) awaiting the pass after it

    def __post_init__(self) -> None:
        if not self.seen:
            self.seen = [self.fully_seen] * len(self.target_batch_s)

    @property
    def fully_seen(self) -> float:
        """The passes after which a size's cost stands (follows only the level): as many as the
        level's own memory, ``1 / (1 - decay)``."""
        return float(round(1.0 / (1.0 - self.tunables.decay)))

    @property
    def anchored(self) -> bool:
        """In seconds: measured, or a prior some pass has given its unit."""
        return self.level_seen != 0

    @property
    def thin(self) -> bool:
        """Some size is still known only from a prior."""
        return min(self.seen) < self.fully_seen

    @property
    def k_max(self) -> int:
        return len(self.target_batch_s) - 1

    def cycle_s(self, k: int) -> float:
        return k * self.draft_token_s + self.target_batch_s[k]

    def update_draft(self, per_token_s: float, weight: float = 0.1) -> None:
        self.draft_token_s = (1 - weight) * self.draft_token_s + weight * per_token_s

    def use_threads(self, count: int) -> None:
        """The engine now computes with ``count`` threads: plan with the batch costs measured at
        that count (as the machine's load has scaled them since), keeping these for a return."""
        if count == self.threads:
            return
        if self.threads:
            self.by_threads[self.threads] = list(self.target_batch_s)
        if count in self.by_threads:
            self.target_batch_s = list(self.by_threads[count])
        # else none measured at that count: these stand, and the level follows the passes there
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
        self.learned = True
        pending, self._pending = self._pending, None
        if batch > 1:
            if pending is not None:  # two verify passes in a row: the first is judged alone
                self._judge(pending[0], pending[1])
            self._pending = (batch, seconds)
            return
        if pending is None:
            self._judge(1, seconds)
            return
        rows, verify_s = pending
        one = self.target_batch_s[0]
        self._level((verify_s + seconds) / (self.target_batch_s[rows - 1] + one))
        self._learn(rows, verify_s + seconds - self.target_batch_s[0])  # the rebuild after it is the pass's

    def _judge(self, rows: int, seconds: float) -> None:
        self._level(seconds / self.target_batch_s[rows - 1])
        self._learn(rows, seconds)

    def _learn(self, rows: int, seconds: float) -> None:
        """A size still thin takes the mean of the passes that measured it (after the level moved)."""
        seen = self.seen[rows - 1]
        if seen >= self.fully_seen or seconds <= 0:
            return
        cost = self.target_batch_s[rows - 1]
        self.target_batch_s[rows - 1] = cost + (seconds - cost) / (seen + 1)
        self.seen[rows - 1] = seen + 1

    def _level(self, ratio: float) -> None:
        """Move every cost, in log, ``1 - decay`` of the way to ``ratio`` times itself. The
        draft's cost moves with the target's: moved apart, a stall that faded slowly left it
        raised, and after 50,000 passes on a noisy machine a lookup cost a second a token and
        Auto never drafted again (the bench, from its 4th round)."""
        seen = self.level_seen
        thin = seen is not None and seen < self.fully_seen
        # a prior's level is the mean (in log) of its first passes: the first gives it its unit,
        # and one slow pass after a load does not set it for the whole answer
        factor = ratio ** (1.0 / (seen + 1) if thin and seen is not None else 1.0 - self.tunables.decay)
        self.target_batch_s = [s * factor for s in self.target_batch_s]
        self.draft_token_s *= factor
        if thin and seen is not None:
            self.level_seen = seen + 1
        else:
            self.load *= factor  # load is measured from a level that stands

    def load_note(self) -> str:
        """How far the costs moved from the calibration, when it shows at one decimal ("" while
        it reads 1.0x). Load is one cause, a context deeper or shallower than the calibration's
        another: not named."""
        if round(self.load, 1) != 1.0:
            return f"target passes now cost {self.load:.1f}x the calibration"
        return ""


# What the prior charges a pass of b rows against one row, before anything was measured here
# (docs/auto.md, "Costs before any measurement"): on a CPU a batch is compute-bound, each row
# costing about a third of a token beyond the first, plus the graph rebuild (0.15 of a token)
# that any pass of more than one row causes; on a GPU a pass is bound by reading the weights,
# and 65 rows cost about two.
CPU_ROW = 1 / 3
GPU_ROW = 1 / 64
REBUILD = 0.15


def prior_costs(k_max: int, on_cpu: bool, draft_ratio: float, tunables: AutoTunables = DEFAULT_TUNABLES) -> CostModel:
    """Costs for drafts of up to ``k_max`` when none were measured on this machine: the shape
    above in no unit (the first measured pass gives it one), a drafted token at ``draft_ratio``
    of a target token (a draft model: its size over the target's; 0 for a lookup), every size
    thin so the first passes that measure it replace it."""
    row = CPU_ROW if on_cpu else GPU_ROW
    table = [1.0] + [1.0 + REBUILD + row * (b - 1) for b in range(2, k_max + 2)]
    return CostModel(table, draft_ratio, tunables=tunables, seen=[0.0] * len(table), level_seen=0.0)
