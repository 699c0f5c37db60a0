"""Auto's costs measured on this machine, remembered across processes.

Without them every process timed its passes before its first answer: a fresh one-shot
``specchat generate --spec auto`` waited 9.8 s against 4 s for plain decoding, and 38-214 s on a
busy machine (issue 45). So the costs a calibration measures, and those the answers' own passes
refine, are written down, and the next process plans with them at once.

A figure is for one machine, one llama.cpp build (its version, its CPU features and the library
file itself: a rebuild with other patches times differently), one target and draft (their files
and where their layers compute) and one thread count. Its content is the target's seconds per
pass of 1, 2, ... rows with the passes seen behind each size, and each drafter's seconds per
drafted token. No Qt here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop_app.engine.api import DrafterKind
from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.engine.auto.tunables import DEFAULT_TUNABLES, AutoTunables
from desktop_app.engine.kept_figures import Entry, KeptFigures
from desktop_app.engine.llama.backend import build_fingerprint
from desktop_app.engine.llama.thread_memory import machine_fingerprint

MEMORY_VERSION = 1
MAX_ROWS = 1024  # a table longer than this is not ours


def _valid(entry: Entry) -> bool:
    batch, seen, draft = entry.get("batch_s"), entry.get("seen"), entry.get("draft_s")
    return (
        isinstance(batch, list)
        and isinstance(seen, list)
        and 0 < len(batch) == len(seen) <= MAX_ROWS
        and all(isinstance(x, int | float) and 0 < x < 1e3 for x in batch)
        and all(isinstance(x, int | float) and x >= 0 for x in seen)
        and isinstance(draft, dict)
        and all(
            k in DrafterKind._value2member_map_ and isinstance(v, int | float) and 0 <= v < 1e3
            for k, v in draft.items()
        )
    )


class CostMemory:
    """The file of remembered costs (``path`` is called on first use; see KeptFigures)."""

    def __init__(self, path: Callable[[], Path], machine: str | None = None, build: str | None = None) -> None:
        self._file = KeptFigures(path, "Auto's costs", "costs", MEMORY_VERSION, _valid)
        self._machine = machine
        self._build = build

    def for_pair(self, pair: str) -> PairCosts:
        """The costs of one target and draft (``pair``: their fingerprints) on this machine and build."""
        if self._machine is None:
            self._machine = machine_fingerprint()
        if self._build is None:
            self._build = build_fingerprint()
        return PairCosts(self, f"{self._machine}/{self._build}/{pair}")

    def get(self, key: str) -> Entry | None:
        return self._file.get(key)

    def put(self, key: str, entry: Entry) -> None:
        self._file.put(key, entry)


@dataclass(frozen=True)
class PairCosts:
    """One target and draft's costs on this machine and build, per thread count."""

    memory: CostMemory
    prefix: str

    def recall(
        self, drafter: DrafterKind | None, k_max: int, threads: int, tunables: AutoTunables = DEFAULT_TUNABLES
    ) -> CostModel | None:
        """The costs for drafts of up to ``k_max`` at ``threads``, if this drafter's were kept at
        a table that long (a longer one is cut)."""
        entry = self.memory.get(self._key(threads))
        if entry is None or len(entry["batch_s"]) < k_max + 1:
            return None
        draft = entry["draft_s"].get(drafter.value if drafter is not None else "", None)
        if drafter is not None and draft is None:
            return None
        return CostModel(
            [float(x) for x in entry["batch_s"][: k_max + 1]],
            float(draft or 0.0),
            threads=threads,
            tunables=tunables,
            seen=[float(x) for x in entry["seen"][: k_max + 1]],
        )

    def remember(self, drafter: DrafterKind | None, costs: CostModel) -> None:
        """Keep these costs (at their thread count), over the sizes and drafters kept before."""
        if not costs.measured or not costs.anchored or costs.threads <= 0:
            return
        key = self._key(costs.threads)
        old: dict[str, Any] = self.memory.get(key) or {"batch_s": [], "seen": [], "draft_s": {}}
        n = len(costs.target_batch_s)
        batch = list(costs.target_batch_s) + list(old["batch_s"][n:])
        seen = list(costs.seen) + list(old["seen"][n:])
        draft = dict(old["draft_s"])
        if drafter is not None:
            draft[drafter.value] = costs.draft_token_s
        self.memory.put(key, {"batch_s": batch, "seen": seen, "draft_s": draft})

    def _key(self, threads: int) -> str:
        return f"{self.prefix}/threads {threads}"
