"""The draft/verify loop.

State between cycles: the target's KV cache holds every committed token except the newest one
(``context[-1]``). Each cycle drafts up to k tokens after it, then decodes
``[context[-1], d1..dk]`` on the target in ONE batch with logits for those k+1 rows, keeps the
longest accepted prefix plus one token from the target (the correction, or a bonus token when
all k were accepted), and trims the rejected drafts from the cache. With k = 0 this is plain
decoding, so "off" runs the very same code.

The token at each answer position is the target's own (greedy: its argmax; sampling: its
Gumbel-max sample with the answer's noise at that position), and a draft is kept exactly when it
is that token, so a seed gives the same text in every speculation mode.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from desktop_app.engine.api import DRAFT_K, DrafterKind, FinishReason, SamplingParams
from desktop_app.engine.auto.drafter_choice import DrafterChoice, Plan
from desktop_app.engine.drafters import Draft
from desktop_app.engine.events import Event, Finished, PromptProgress, StatsUpdate, TextChunk
from desktop_app.engine.llama.grammar import GrammarState
from desktop_app.engine.llama.model import LlamaModel
from desktop_app.engine.llama.threads import ThreadTuner
from desktop_app.engine.llama.vision import MediaSpans
from desktop_app.engine.loop.image_prompt import cut_at_image
from desktop_app.engine.loop.lazy_grammar import answer_grammar
from desktop_app.engine.loop.reasoning_count import ReasoningCount
from desktop_app.engine.loop.target_rows import PlainRows, Rows
from desktop_app.engine.loop.text_stream import TextStream
from desktop_app.engine.reasoning import ReasoningFormat
from desktop_app.engine.sampling_noise import SamplingNoise, fresh_seed
from desktop_app.engine.stats import GenerationStats, SpeedWindow

STATS_INTERVAL_S = 0.1


@dataclass
class LoopConfig:
    max_tokens: int = 512
    sampling: SamplingParams = field(default_factory=SamplingParams)
    stop: Sequence[str] = ()
    draft_p_min: float = 0.0
    reasoning: ReasoningFormat | None = None  # the target's reasoning markers (counted apart in the stats)
    opened: str = ""  # the reasoning marker the prompt left open: the answer's text starts with it
    grammar_triggers: Sequence[str] = ()  # the grammar waits for one of these (GenerateRequest's)
    media: MediaSpans | None = None  # where the prompt's images sit (None: a text prompt)
    aside: str = ""  # why some drafters stand aside for this answer (said with Auto's reason)


@dataclass
class Verified:
    """One target pass: the tokens it commits and how many of them were accepted drafts."""

    tokens: list[int]
    n_accepted: int
    batch: int
    seconds: float


def verify(draft: Draft, rows: Rows, noise: SamplingNoise) -> tuple[list[int], int]:
    """Check the drafts against the target's rows; return (new tokens, how many drafts kept).
    ``rows`` gives each row's token (penalised for what came before it, under the grammar) at
    position i of ``noise``: a draft is kept when it is that token, and the first one that is not
    is replaced by it (greedy or sampled, the same rule)."""
    out: list[int] = []
    for i, token in enumerate(draft.tokens):
        choice = rows.token(i, noise)
        out.append(choice)
        if choice != token:
            return out, i
    out.append(rows.token(len(draft.tokens), noise))
    return out, len(draft.tokens)


class SpeculativeLoop:
    """One answer: prefill, then cycles of propose -> verify -> record -> emit until done."""

    def __init__(
        self,
        target: LlamaModel,
        config: LoopConfig,
        choice: DrafterChoice,
        stats: GenerationStats,
        cancel: threading.Event | None = None,
        threads: ThreadTuner | None = None,
        clock: Callable[[], float] = time.perf_counter,
        grammar: GrammarState | None = None,
    ) -> None:
        self.target = target
        # the request's grammar (its start): drafts are checked against it, rows constrained
        self.grammar = answer_grammar(target, grammar, config.grammar_triggers, config.reasoning, config.opened)
        self.config = config
        self.choice = choice
        self.drafters = choice.drafters  # the candidates that may draft this answer
        self.stats = stats
        self.cancel = cancel
        self.threads = threads or ThreadTuner(target.set_threads, fixed=target.options.n_threads)
        self.clock = clock  # what passes and answers are timed by (a replay's is virtual)
        seed = config.sampling.seed
        self.noise = SamplingNoise(fresh_seed() if seed is None else seed)  # one seed per answer
        self.stream = TextStream(config.stop)
        self.reasoning = ReasoningCount(config.reasoning, config.opened, stats)
        self.window = SpeedWindow()
        self.context: list[int] = []
        self.tokens_out: list[int] = []
        self.finish = FinishReason.LENGTH
        self.done = False
        self.last_batch = 0  # the rows of the previous target pass

    # ------------------------------------------------------------------ steps
    @property
    def hidden(self) -> bool:
        """A candidate reads the target's hidden rows (MTP, Gemma 4 assistant)."""
        return any(d.needs_hidden for d in self.drafters)

    def prefill(self, prompt: list[int], dropped_turns: int = 0) -> Iterator[PromptProgress]:
        """Cache the prompt except its last token (the first cycle decodes it with the drafts),
        one batch at a time, saying how far it got after each. A cancel between batches stops
        it (``finish`` CANCELLED, ``done``) with what was read kept in the cache."""
        self.stats.prompt_tokens = total = len(prompt)
        self.target.ensure_fits(len(prompt) + 1)
        starts = [p for d in self.drafters if d.needs_hidden and (p := d.hidden_from(prompt)) is not None]
        hidden_from = min(starts) if starts else None
        steps = self.target.prefill_steps(prompt[:-1], False, hidden_from, self.config.media)
        kept = next(steps)
        yield PromptProgress(kept, total, dropped_turns)
        while (done := next(steps, None)) is not None:
            self.stats.prompt_tokens_new = done - kept
            yield PromptProgress(done, total, dropped_turns)
            if self.cancel is not None and self.cancel.is_set():
                self.finish, self.done = FinishReason.CANCELLED, True
                return
        self.stats.prompt_tokens_new = total - kept
        for drafter in self.drafters:
            hidden = self.target.prefill_hidden if hidden_from is not None and drafter.needs_hidden else None
            drafter.prepare(prompt, hidden)
        self.context = list(prompt)
        yield PromptProgress(total, total, dropped_turns)

    def room(self) -> int | None:
        """The most tokens this cycle may draft, or None when the answer must end now."""
        if self.cancel is not None and self.cancel.is_set():
            self.finish = FinishReason.CANCELLED
            return None
        remaining = self.config.max_tokens - len(self.tokens_out)
        if remaining <= 0:
            return None
        room = self.target.n_ctx - len(self.target.kv_tokens)  # rows left for [last, drafts...]
        if room < 1:
            self.finish = FinishReason.CONTEXT_FULL
            return None
        return min(remaining - 1, room - 1, self.target.max_draft or DRAFT_K.high)

    def here(self) -> SamplingNoise:
        """The noise from the next answer position on (the first draft's and verify row 0's)."""
        return self.noise.after(len(self.tokens_out))

    def propose(self, limit: int) -> Plan:
        plan = self.choice.plan(self.context, limit, self.config.sampling, self.here(), self.config.draft_p_min)
        if self.config.media is not None:
            cut_at_image(plan.draft.tokens)  # a copy of the prompt may run into an image's placeholders
        return plan

    def reason(self) -> str:
        """Auto's reason, after why some drafters stand aside (LoopConfig.aside)."""
        return "; ".join(r for r in (self.config.aside, self.choice.reason()) if r)

    def verify(self, draft: Draft) -> Verified:
        """One target decode of [last, drafts...]; the rejected rows leave the cache."""
        start = self.clock()
        kept = len(self.target.kv_tokens)
        # under a grammar a draft ends at its first refused token, which needs no row of its own
        allowed = len(draft.tokens) if self.grammar is None else self.grammar.check(draft)
        batch = [self.context[-1], *draft.tokens[:allowed]]
        if len(batch) == 1:
            self.target.decode_one(batch[0])
        else:
            self.target.decode_all_rows(batch)
        rows = self.target.hidden_rows(len(batch)) if self.hidden else None
        params, seen = self.config.sampling, (self.context, draft.tokens)
        if self.grammar is None:
            target_rows: Rows = PlainRows(self.target, params, *seen)
        else:
            target_rows = self.grammar.rows(self.target, params, *seen)
        tokens, n_accepted = verify(draft, target_rows, self.here())
        if self.grammar is not None:
            self.grammar.commit(tokens, n_accepted)
        self.target.truncate(kept + 1 + n_accepted)
        for drafter in self.drafters:
            drafter.accepted(tokens, rows)
        return Verified(tokens, n_accepted, len(batch), self.clock() - start)

    def record(self, plan: Plan, result: Verified) -> None:
        s, draft = self.stats, plan.draft
        s.target_passes += 1
        s.drafted += len(draft.tokens)
        s.accepted += result.n_accepted
        s.draft_s += draft.seconds
        s.verify_s += result.seconds
        s.k_current = plan.k
        s.k_history.append(plan.k)
        s.cycles.append((len(draft.tokens), result.n_accepted))
        self.reasoning.drafts(len(draft.tokens), result.n_accepted)
        # a one-token pass a thread trial ran at another count says nothing of Auto's costs
        # (they are the count's that stands)
        standing = result.batch > 1 or self.threads.count == self.threads.batch_count
        if result.batch == 1 and self.last_batch == 1 and standing:
            s.plain_passes += 1  # what plain decoding costs per token (the measured speed-up's base)
            s.plain_s += result.seconds
        self.last_batch = result.batch
        bonus = result.tokens[-1] if result.n_accepted == len(draft.tokens) else None
        self.choice.observe(plan, result.n_accepted, result.seconds if standing else 0.0, result.batch, bonus)
        self.threads.observe(result.batch, result.seconds)

    def emit(self, result: Verified, plan: Plan) -> Iterator[TextChunk]:
        """Commit the new tokens and yield their text; sets ``done`` and ``finish`` when the answer ends."""
        now = self.clock()
        for j, token in enumerate(result.tokens):
            if self.target.is_eog(token):
                self.finish, self.done = FinishReason.STOP, True
                return
            self.tokens_out.append(token)
            self.context.append(token)
            self.choice.see(token)
            data = self.target.piece(token)
            self.reasoning.token(data, now)
            text = self.stream.push(data)
            if text:
                by = plan.candidate.name if plan.candidate is not None and j < result.n_accepted else ""
                yield TextChunk(text, from_draft=bool(by), drafter=by)
            if self.stream.stopped:
                self.finish, self.done = FinishReason.STOP, True
                return
            if len(self.tokens_out) >= self.config.max_tokens:
                self.finish, self.done = FinishReason.LENGTH, True
                return

    def count(self, emitted: int, now: float, start: float) -> None:
        if emitted and self.stats.generated_tokens == 0:
            self.stats.ttft_s = now - start
        self.stats.generated_tokens = len(self.tokens_out)
        self.window.add(emitted, now)

    def live_stats(self, now: float, decode_start: float) -> StatsUpdate:
        self.stats.decode_s = now - decode_start
        self.stats.window_tokens_per_s = self.window.rate(now)
        self.stats.auto_reason = self.reason()
        self.stats.by_drafter = self.choice.per_drafter()
        self.stats.threads = self.threads.in_use.describe()
        return StatsUpdate(self.stats)

    # ------------------------------------------------------------------ the loop
    def run(self, prompt: list[int], dropped_turns: int = 0, began: float | None = None) -> Iterator[Event]:
        """Generate after ``prompt``; yields PromptProgress while reading it, TextChunk /
        StatsUpdate events, then one Finished. ``began``: when the request came (the time to the
        first token counts from it; by default from here)."""
        start = self.clock()
        began = start if began is None else began
        yield from self.prefill(prompt, dropped_turns)
        if self.config.opened:  # the answer's text carries the marker its prompt opened
            opened = self.stream.push(self.config.opened.encode())
            if opened:
                yield TextChunk(opened, from_draft=False)
        decode_start = last_stats = self.clock()
        self.stats.prefill_s = decode_start - start
        self.window.add(0, decode_start)
        while not self.done and (limit := self.room()) is not None:
            plan = self.propose(limit)
            result = self.verify(plan.draft)
            self.record(plan, result)
            before = len(self.tokens_out)
            yield from self.emit(result, plan)
            now = self.clock()
            self.count(len(self.tokens_out) - before, now, began)
            if self.done:
                break
            if now - last_stats >= STATS_INTERVAL_S:
                last_stats = now
                yield self.live_stats(now, decode_start)
        for drafter in self.drafters if self.context else ():  # not when stopped while reading the prompt
            drafter.settle(self.target.kv_tokens)
        if self.grammar is not None:
            self.grammar.close()
        tail = self.stream.flush()
        if tail:
            yield TextChunk(tail, from_draft=False)
        end = self.clock()
        self.stats.decode_s = end - decode_start
        self.stats.window_tokens_per_s = self.window.rate(end) or self.stats.decode_tokens_per_s
        self.stats.finish_reason = self.finish
        self.stats.stop_string = self.stream.stopped_by
        self.stats.auto_reason = self.reason()
        self.stats.by_drafter = self.choice.per_drafter()
        main = self.choice.main_drafter()
        if main:
            self.stats.drafter = DrafterKind(main)
        self.stats.threads = self.threads.in_use.describe()
        yield Finished(text=self.stream.text, token_ids=self.tokens_out, stats=self.stats)
