"""Every number Auto's policy and run tracker were tuned with, in one object.

Each was added for a bench or a replay; docs/auto.md ("Every tuned constant") gives what each
does at length and the evidence behind its value. The policy, its trackers and the engine take
an :class:`AutoTunables` (by default :data:`DEFAULT_TUNABLES`), so a test or an experiment
changes one number by constructing ``AutoTunables(start_caution=0.0)`` rather than patching a
module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from desktop_app.engine.drafters import CopySource


@dataclass(frozen=True)
class AutoTunables:
    # --- acceptance of drafters that run a model
    prior_acceptance: float = 0.6  # prior acceptance (cold state); also the prior of copy-run bucket 0
    prior_weight: float = 4.0  # pseudo-trials behind the acceptance priors
    hot_prior: float = 0.9  # prior right after a fully accepted draft; prior of copy-run buckets 4+
    decay: float = 0.9  # per observed cycle: how much earlier evidence still counts
    pessimism: float = 0.5  # pseudo-failures added when picking k: thin evidence drafts less
    carry_weight: float = 6.0  # trials of evidence a new answer inherits from earlier ones
    # --- thresholds
    min_gain: float = 1.05  # a k > 0 must promise this speed-up over plain decoding
    copy_min_gain: float = 1.15  # ... and a model-free (copied) proposal this much
    # --- copy runs of model-free drafters (the run tracker)
    run_edges: tuple[int, ...] = (1, 4, 8, 16, 32)  # copy-run length buckets: 0, 1-3, 4-7, 8-15, 16-31, 32+
    run_priors: tuple[float, ...] = (0.6, 0.8, 0.9, 0.9, 0.9, 0.9)  # next token's prior per bucket
    source_priors: Mapping[CopySource, tuple[float, ...]] = field(  # per-bucket priors of some sources
        default_factory=lambda: MappingProxyType({CopySource.PROMPT: (0.85, 0.9, 0.9, 0.9, 0.9, 0.9)})
    )
    run_prior_weight: float = 2.0  # pseudo-trials behind each bucket's prior, never forgotten
    run_carry_weight: float = 2.0  # trials of each bucket's evidence a new answer inherits
    miss_caution: float = 1.0  # pseudo-failures on a copy's first token after a miss
    trusted_at_start: frozenset[CopySource] = frozenset({CopySource.PROMPT})  # sources without start caution
    start_caution: float = 2.0  # pseudo-failures on untrusted copies at lengths this answer has not shown
    proven_run: int = 4  # a copy that has held this many tokens in this answer loses the start caution
    check_weight: float = 2.0  # pseudo-tokens behind the run tracker's promise when checked against drafts
    # --- probing a drafter that runs a model while Auto drafts nothing
    probe_every: int = 8  # cycles off before the first probe (doubling while probes miss)
    probe_every_max: int = 256  # the longest probe interval
    probe_k: int = 2  # tokens a probe drafts
    # --- drafting with a model, in Auto
    draft_p_min: float = 0.4  # a draft model stops drafting when its own next-token probability is under this


DEFAULT_TUNABLES = AutoTunables()
