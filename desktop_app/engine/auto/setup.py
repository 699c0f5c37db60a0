"""What Auto keeps of a target and draft pair between answers, and the policies it builds from it.

No answer waits for a measurement: an answer plans with the costs this process measured, else
those an earlier process kept for this machine, build, pair and thread count
(:mod:`cost_memory`), else a prior that its own passes refine (:func:`prior_costs`); what the
passes taught is kept for the next process (:meth:`AutoSetup.keep_learned`). Hosts that stay up
(the window's engine process, ``specchat serve``) measure while idle (:meth:`AutoSetup.prepare`,
giving way the moment a request comes), the target's costs per batch size shared by every
drafter at each thread count. Runs and probe back-off are kept per drafter, so the next answer
starts from what the last one learned. Loading another model drops it all
(:meth:`AutoSetup.forget`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from desktop_app.engine.api import DRAFT_K, DrafterKind, SpecMode
from desktop_app.engine.auto.cost_memory import CostMemory, PairCosts
from desktop_app.engine.auto.cost_model import CostModel, prior_costs
from desktop_app.engine.auto.drafter_choice import DrafterChoice
from desktop_app.engine.auto.policy import AutoPolicy, FixedPolicy, OffPolicy, Policy
from desktop_app.engine.auto.probes import ProbeBackoff
from desktop_app.engine.auto.run_tracker import RunTracker
from desktop_app.engine.auto.tunables import DEFAULT_TUNABLES, AutoTunables
from desktop_app.engine.drafters import CostProbe, Drafter
from desktop_app.engine.llama.model import LlamaModel, runs_on_cpu
from desktop_app.engine.llama.thread_memory import model_fingerprint
from desktop_app.engine.llama.threads import ThreadTuner
from desktop_app.engine.llama.timing import CalibrationInterrupted, time_decodes, tune_threads


def timed_sizes(k_max: int) -> list[int]:
    """The batch sizes calibration times for drafts of up to ``k_max``: every size up to a
    model drafter's default k + 1, then doublings (17, 33, 65), and the largest."""
    sizes = list(range(1, min(k_max, DRAFT_K.default) + 2))
    while sizes[-1] < k_max + 1:
        sizes.append(min(2 * sizes[-1] - 1, k_max + 1))
    return sizes


def _batch_costs(
    target: LlamaModel, k_max: int, token: int, depth: int, reps: int, should_stop: Callable[[], bool] | None
) -> list[float]:
    """Seconds per pass of 1..k_max + 1 rows: the :func:`timed_sizes` timed, the sizes between
    them interpolated (a long pass costs about linearly in its rows on a CPU, and about one
    row's cost on a GPU: either way a line between neighbours)."""
    sizes = timed_sizes(k_max)
    timed = time_decodes(target, sizes, token, depth, reps, should_stop)
    # A bigger batch never costs less: smooth out timing noise (running minimum from the right).
    for b in range(len(timed) - 2, -1, -1):
        timed[b] = min(timed[b], timed[b + 1])
    return [float(np.interp(b, sizes, timed)) for b in range(1, k_max + 2)]


class AutoSetup:
    """Auto's costs and what it learned, per drafter, for the pair loaded now.

    ``apply_threads(count)`` sets every context's thread count (calibration times the target at
    each count the thread tuner may choose)."""

    def __init__(self, apply_threads: Callable[[int], None], tunables: AutoTunables = DEFAULT_TUNABLES) -> None:
        self.tunables = tunables
        self._apply_threads = apply_threads
        self.costs: dict[tuple[DrafterKind | None, int], CostModel] = {}
        # seconds per target batch of 1..k+1, per k_max, per thread count (the shape differs: on 2
        # cores a batch of 9 costs 4x one token with 2 threads, 5.7x with 1)
        self._target_costs: dict[int, dict[int, list[float]]] = {}
        self._runs: dict[str, RunTracker] = {}  # what each drafter's runs did, per drafter
        self._probes: dict[str, ProbeBackoff] = {}  # when Auto next probes a drafter it left off
        self.kept: PairCosts | None = None  # the costs earlier processes kept for this pair (None: none kept)
        self.on_cpu = True  # where the target computes (the prior's shape)
        self.draft_ratio = 0.0  # a drafted token's prior cost, in target tokens

    def on_models(self, target: LlamaModel, draft: object, memory: CostMemory | None) -> None:
        """A new target or draft: what ``memory`` kept for the pair, where it computes, and what
        a drafted token costs against a target token by the models' sizes (the prior's: a draft
        model its size over the target's, a head on the target's states about one layer)."""
        pair = model_fingerprint(target.info, target.options)
        ratio = 1.0 / max(target.info.arch_int("block_count") or 1, 1)
        if isinstance(draft, LlamaModel):
            pair += "+" + model_fingerprint(draft.info, draft.options)
            ratio = draft.info.file_size / max(target.info.file_size, 1)
        self.kept = memory.for_pair(pair) if memory is not None else None
        self.on_cpu = runs_on_cpu(target.options)
        self.draft_ratio = min(ratio, 1.0)

    def forget(self, target_costs: bool = False) -> None:
        """Drop what Auto learned of this pair: its costs (measured again on first use), the
        runs it tracked, and when it next probes; with ``target_costs``
        also the target's timed batches (another target, or another draft sharing the machine)."""
        self.costs.clear()
        self._runs.clear()
        self._probes.clear()
        if target_costs:
            self._target_costs.clear()

    def use_threads(self, count: int) -> None:
        """Plan with the costs measured at ``count`` threads."""
        for costs in self.costs.values():
            costs.use_threads(count)

    def calibrate(
        self,
        target: LlamaModel,
        threads: ThreadTuner,
        drafter: Drafter | None,
        k_max: int,
        reps: int = 5,
        depth: int | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> CostModel:
        """Measure this machine's target cost per batch size and the drafter's cost per token.

        Measured ``depth`` tokens into the context (by default the tunables' ``calibration_depth``:
        attention grows with it), appending to whatever the caches hold and trimming back
        afterwards, so a conversation's cache survives.
        """
        depth = self.tunables.calibration_depth if depth is None else depth
        key = (drafter.kind if drafter is not None else None, k_max)
        if key in self.costs:
            return self.costs[key]
        filler = (target.tokenize(" the", add_special=False) or [max(target.bos_id, 1)])[0]
        tables = self._tables_for(k_max)
        threads.recall()  # a count an earlier process measured at this load stands without a trial
        if tables is None and threads.quiet_count is None:  # the thread count first: costs depend on it
            tune_threads(target, threads, filler, depth, should_stop)
        if tables is None:  # measured once per k_max, whoever drafts, at each count the tuner may use
            chosen = threads.count
            # at a remembered count, only at it: timing the others is the trial it spares (if the
            # tuner moves later, Auto rescales the costs it has to the passes it sees)
            counts = (chosen,) if threads.remembered else threads.candidates
            tables = {}
            try:
                for count in sorted(counts, key=lambda c: c != chosen):
                    self._apply_threads(count)
                    tables[count] = _batch_costs(
                        target, k_max, filler, depth, reps if count == chosen else 3, should_stop
                    )
            finally:
                self._apply_threads(chosen)
            self._target_costs[k_max] = tables
        draft_s = drafter.token_cost_s(CostProbe(filler, depth, reps, should_stop)) if drafter is not None else 0.0
        costs = CostModel(
            list(tables[threads.count]),
            draft_s,
            by_threads={c: list(t) for c, t in tables.items()},
            threads=threads.count,
            tunables=self.tunables,
        )
        self.costs[key] = costs
        if self.kept is not None:
            for count, table in tables.items():
                self.kept.remember(key[0], dataclasses.replace(costs, target_batch_s=list(table), threads=count))
        return costs

    def known(self, drafter: Drafter | None, k_max: int, threads: int) -> CostModel:
        """The costs an answer plans with, without measuring: this process's, else those kept
        for this machine (at ``threads``), else the prior (its first passes give it a unit)."""
        kind = drafter.kind if drafter is not None else None
        key = (kind, k_max)
        if key in self.costs:
            return self.costs[key]
        free = drafter is None or drafter.free
        costs = self.kept.recall(kind, k_max, threads, self.tunables) if self.kept is not None else None
        if costs is None:
            tables = self._tables_for(k_max)
            if tables is not None and threads in tables and free:  # measured here for another drafter
                costs = CostModel(list(tables[threads]), 0.0, threads=threads, tunables=self.tunables)
        if costs is None:
            costs = prior_costs(k_max, self.on_cpu, 0.0 if free else self.draft_ratio, self.tunables)
            costs.threads = threads
        self.costs[key] = costs
        return costs

    def keep_learned(self) -> None:
        """Write what answers' passes taught the costs, for the next process."""
        if self.kept is None:
            return
        for (kind, _k), costs in self.costs.items():
            if costs.learned and costs.anchored and costs.measured:
                self.kept.remember(kind, costs)
                costs.learned = False

    def _tables_for(self, k_max: int) -> dict[int, list[float]] | None:
        """Target costs up to k_max + 1 rows per thread count, cut from any table measured as long."""
        longer = [k for k in self._target_costs if k >= k_max]
        if not longer:
            return None
        return {c: t[: k_max + 1] for c, t in self._target_costs[min(longer)].items()}

    def use_costs(self, drafter: DrafterKind, k_max: int, costs: CostModel) -> None:
        """Use these costs for this drafter and maximum k instead of measuring them: they stand
        as given, whatever the passes here take, so Auto decides the same on any machine."""
        if costs.k_max != k_max:
            raise ValueError(f"costs for k up to {costs.k_max} given for k_max {k_max}")
        self.costs[(drafter, k_max)] = dataclasses.replace(costs, measured=False)

    def prepare(
        self,
        target: LlamaModel,
        threads: ThreadTuner,
        candidates: Sequence[Drafter],
        draft_max: int,
        should_stop: Callable[[], bool] | None = None,
    ) -> CostModel | None:
        """Calibrate for these candidates now, unless costs kept for this machine are known
        (they stand, and answers refine them); None when there are none or ``should_stop`` said
        so between timed decodes (answers then plan with the prior and their own passes)."""
        if not candidates:
            return None
        k_max = min(DRAFT_K.check(draft_max), target.max_draft or draft_max)
        copy_max = copy_limit(target)
        # the longest first: shorter tables are cut from it
        ks = [copy_max if c.free else k_max for c in candidates]
        order = sorted(range(len(candidates)), key=lambda i: -ks[i])
        threads.recall()  # the count an earlier process kept, to find its costs at
        costs: dict[int, CostModel] = {}
        try:
            for i in order:
                key = (candidates[i].kind, ks[i])
                kept = self.kept.recall(key[0], ks[i], threads.count, self.tunables) if self.kept else None
                if key not in self.costs and kept is not None and threads.quiet_count is not None:
                    self.costs[key] = kept
                if key in self.costs and self.costs[key].anchored and not self.costs[key].thin:
                    costs[i] = self.costs[key]
                    continue
                self.costs.pop(key, None)  # a prior, or thin costs: measure them while idle
                costs[i] = self.calibrate(target, threads, candidates[i], ks[i], should_stop=should_stop)
        except CalibrationInterrupted:
            return None
        return costs[0]

    def choice(
        self,
        spec: SpecMode,
        candidates: Sequence[Drafter],
        k_max: int,
        copy_max: int,
        costs_for: Callable[[Drafter, int], CostModel],
    ) -> DrafterChoice:
        """The drafters of an answer with their policies; ``costs_for`` gives a drafter's costs
        for drafts of up to k (measuring them on first use). In Auto a model-free drafter drafts
        copies of up to ``copy_max``, the others up to ``k_max``."""
        return DrafterChoice([(d, self.policy(spec, d, k_max, copy_max, costs_for)) for d in candidates])

    def policy(
        self,
        spec: SpecMode,
        drafter: Drafter | None,
        k_max: int,
        copy_max: int,
        costs_for: Callable[[Drafter, int], CostModel],
    ) -> Policy:
        if spec is SpecMode.OFF or drafter is None:
            return OffPolicy()
        if spec is SpecMode.ON:
            return FixedPolicy(k_max)
        # Costs and runs carry over between answers: the next turn of a conversation starts
        # from what this pair and this kind of task did last time.
        t = self.tunables
        k_max = copy_max if drafter.free else k_max
        costs = costs_for(drafter, k_max)
        name = drafter.kind.value
        runs = self._runs.setdefault(name, RunTracker(t))
        probes = self._probes.setdefault(name, ProbeBackoff(t))
        if drafter.free:
            return AutoPolicy(costs, k_max, probe=False, tunables=t, runs=runs, probes=probes)
        return AutoPolicy(costs, k_max, tunables=t, model=runs, probes=probes)


def copy_limit(target: LlamaModel) -> int:
    """The longest copy Auto drafts in one pass on this target (llama.cpp's ngram-mod drafts 64)."""
    return min(DRAFT_K.high, target.max_draft or DRAFT_K.high)
