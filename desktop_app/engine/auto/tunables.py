"""Every number Auto decides with, in one frozen object: eleven of them.

Auto has one estimator (how long a draft from each source holds: a Beta prior per run length,
evidence forgotten at one ``decay``), one rule for thin evidence (a lower credible bound,
``caution`` standard deviations under the estimate), one gain threshold (``min_gain``) and one
cost model (the calibrated table times one level, followed at the same ``decay``). The rest
say when a drafter that runs a model is probed, where a draft model stops in a cycle, and how
deep calibration times its passes. docs/auto.md explains the mechanism and gives the evidence
behind each value.

The policy, its trackers, the cost model and the engine take an :class:`AutoTunables` (by
default :data:`DEFAULT_TUNABLES`): a test or an experiment constructs
``AutoTunables(caution=0.0)`` rather than patching a module.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AutoTunables:
    # --- the estimator: the chance the next drafted token is right, per source and run length
    start_prior: float = 0.6  # prior at run length 0 (after a miss); the hazard falls as 1 / (1 + length)
    prompt_prior: float = 0.85  # the same for a copy of the prompt (what this prompt holds)
    prior_weight: float = 2.0  # pseudo-trials behind each prior (never forgotten); also the
    # most trials of evidence a new answer inherits from earlier ones
    decay: float = 0.9  # per observation: how much earlier evidence (and the cost level) still counts
    # --- thin evidence, and the bar a draft must clear
    caution: float = 1.0  # rates are taken this many standard deviations under the estimate
    min_gain: float = 1.05  # a draft must promise this speed-up over plain decoding
    # --- probing a drafter that runs a model while Auto drafts nothing
    probe_every: int = 8  # cycles off before the first probe (doubling while probes miss)
    probe_every_max: int = 256  # the longest probe interval
    probe_k: int = 2  # tokens a probe drafts
    # --- drafting with a model, in Auto
    draft_p_min: float = 0.4  # a draft model stops drafting when its own next-token probability is under this
    # --- calibration
    calibration_depth: int = 160  # tokens of context behind the timed passes


DEFAULT_TUNABLES = AutoTunables()
