"""The draft/verify loop.

State between cycles: the target's KV cache holds every committed token except the newest one
(``id_last``). Each cycle drafts up to k tokens after ``id_last``, then decodes
``[id_last, d1..dk]`` on the target in ONE batch with logits for those k+1 rows, keeps the
longest accepted prefix plus one token from the target (the correction, or a bonus token when
all k were accepted), and trims the rejected drafts from the cache. With k = 0 this is plain
decoding, so "off" runs the very same code.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from desktop_app.engine.drafters import Draft, Drafter
from desktop_app.engine.events import Event, Finished, StatsUpdate, TextChunk
from desktop_app.engine.model import LlamaModel
from desktop_app.engine.policy import Policy
from desktop_app.engine.sampling import SamplingParams, accept_draft, next_token, probabilities
from desktop_app.engine.stats import GenerationStats, SpeedWindow
from desktop_app.engine.text_stream import TextStream

STATS_INTERVAL_S = 0.1


@dataclass
class LoopConfig:
    max_tokens: int = 512
    sampling: SamplingParams = field(default_factory=SamplingParams)
    stop: Sequence[str] = ()
    draft_p_min: float = 0.0


def _verify(
    target: LlamaModel, draft: Draft, params: SamplingParams, rng: np.random.Generator
) -> tuple[list[int], int]:
    """Check the drafts against the target's rows; return (new tokens, how many drafts kept)."""
    out: list[int] = []
    for i, token in enumerate(draft.tokens):
        logits = target.logits(i)
        if params.greedy:
            choice = int(np.argmax(logits))
            if choice != token:
                out.append(choice)
                return out, i
        else:
            ok, replacement = accept_draft(probabilities(logits, params), draft.q[i], token, rng)
            if not ok:
                assert replacement is not None
                out.append(replacement)
                return out, i
        out.append(token)
    out.append(next_token(target.logits(len(draft.tokens)), params, rng))
    return out, len(draft.tokens)


def run_loop(
    target: LlamaModel,
    prompt: list[int],
    config: LoopConfig,
    policy: Policy,
    drafter: Drafter | None,
    stats: GenerationStats,
    cancel: threading.Event | None = None,
) -> Iterator[Event]:
    """Generate after ``prompt``; yields TextChunk / StatsUpdate events, then one Finished."""
    start = time.perf_counter()
    rng = np.random.default_rng(config.sampling.seed)
    stream = TextStream(config.stop)
    window = SpeedWindow()
    tokens_out: list[int] = []

    stats.prompt_tokens = len(prompt)
    target.ensure_fits(len(prompt) + 1)
    stats.prompt_tokens_new = target.prefill(prompt[:-1], need_logits=False) + 1
    if drafter is not None and policy.k_max > 0:
        drafter.prepare(prompt)
    decode_start = time.perf_counter()
    stats.prefill_s = decode_start - start
    window.add(0, decode_start)
    context = list(prompt)
    last_stats = decode_start
    finish = "length"
    # While auto mode drafts nothing, a free drafter (prompt lookup) still proposes in the
    # background and is scored against what the target said, so auto can switch back on.
    shadow_free = drafter is not None and getattr(drafter, "free", False) and policy.k_max > 0
    shadow: list[int] = []
    shadow_hits = 0

    while True:
        if cancel is not None and cancel.is_set():
            finish = "cancelled"
            break
        remaining = config.max_tokens - len(tokens_out)
        if remaining <= 0:
            break
        room = target.n_ctx - len(target.kv_tokens)  # rows left for [id_last, drafts...]
        if room < 1:
            finish = "context_full"
            break
        k = min(policy.choose_k(), remaining - 1, room - 1)
        draft = Draft()
        if k > 0 and drafter is not None:
            shadow = []
            draft = drafter.draft(context, k, config.sampling, rng, config.draft_p_min)
        elif shadow_free and not shadow:
            shadow, shadow_hits = drafter.lookup(context, policy.k_max), 0  # type: ignore[union-attr]
        t_verify = time.perf_counter()
        kept_len = len(target.kv_tokens)
        batch = [context[-1], *draft.tokens]
        if len(batch) == 1:
            target.decode_one(batch[0])
        else:
            target.decode_all_rows(batch)
        new_tokens, n_accepted = _verify(target, draft, config.sampling, rng)
        target.truncate(kept_len + 1 + n_accepted)
        now = time.perf_counter()

        stats.target_passes += 1
        stats.drafted += len(draft.tokens)
        stats.accepted += n_accepted
        stats.draft_s += draft.seconds
        stats.verify_s += now - t_verify
        stats.k_current = k
        stats.k_history.append(k)
        stats.cycles.append((len(draft.tokens), n_accepted))
        policy.observe(len(draft.tokens), n_accepted, draft.seconds, now - t_verify, len(batch))

        done = False
        emitted = 0
        for j, token in enumerate(new_tokens):
            if target.is_eog(token):
                finish, done = "stop", True
                break
            tokens_out.append(token)
            context.append(token)
            emitted += 1
            if shadow:
                hit = token == shadow[shadow_hits]
                shadow_hits += hit
                if not hit or shadow_hits == len(shadow):
                    policy.observe_shadow(len(shadow), shadow_hits)
                    shadow = []
            text = stream.push(target.piece(token))
            if text:
                yield TextChunk(text, from_draft=j < n_accepted)
            if stream.stopped:
                finish, done = "stop", True
                break
            if len(tokens_out) >= config.max_tokens:
                finish, done = "length", True
                break
        if emitted and stats.generated_tokens == 0:
            stats.ttft_s = now - start
        stats.generated_tokens = len(tokens_out)
        window.add(emitted, now)
        if done:
            break
        if now - last_stats >= STATS_INTERVAL_S:
            last_stats = now
            stats.decode_s = now - decode_start
            stats.window_tokens_per_s = window.rate(now)
            stats.auto_reason = policy.reason()
            yield StatsUpdate(stats)

    tail = stream.flush()
    if tail:
        yield TextChunk(tail, from_draft=False)
    end = time.perf_counter()
    stats.decode_s = end - decode_start
    stats.window_tokens_per_s = window.rate(end) or stats.decode_tokens_per_s
    stats.finish_reason = finish
    stats.auto_reason = policy.reason()
    yield Finished(text=stream.text, token_ids=tokens_out, stats=stats)
