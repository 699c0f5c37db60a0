"""The engine's public surface: load a target (and optionally a draft), generate, cancel.

No Qt here. One Engine is used by one thread at a time (the GUI runs it in a child process).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from desktop_app.engine.api import (
    DRAFT_K,
    NO_DRAFTER,
    DrafterKind,
    Embeddings,
    FinishReason,
    GenerateRequest,
    LoadedModels,
    ModelInfo,
    ModelOptions,
    SpecMode,
)
from desktop_app.engine.auto.cost_memory import CostMemory
from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.engine.auto.drafter_choice import DrafterChoice
from desktop_app.engine.auto.setup import AutoSetup, copy_limit
from desktop_app.engine.context_size import PromptSize
from desktop_app.engine.drafters import Drafter
from desktop_app.engine.drafters.history_vocab import HistoryVocab
from desktop_app.engine.drafters.ngram_cache import ChatNgrams
from desktop_app.engine.errors import EngineError
from desktop_app.engine.events import Event, Finished
from desktop_app.engine.llama.backend import BackendInfo, backend_info
from desktop_app.engine.llama.compat import DraftCompatibility
from desktop_app.engine.llama.embeddings import embed_in_turns
from desktop_app.engine.llama.grammar import GrammarState
from desktop_app.engine.llama.model import LlamaModel, ProgressFn
from desktop_app.engine.llama.nextn import AssistantWeights
from desktop_app.engine.llama.thread_memory import ThreadMemory
from desktop_app.engine.llama.threads import ThreadTuner
from desktop_app.engine.llama.vision import MediaSpans
from desktop_app.engine.loop.drafter_factory import DrafterFactory
from desktop_app.engine.loop.generator import LoopConfig, SpeculativeLoop
from desktop_app.engine.loop.image_prompt import for_images, learnable_turn
from desktop_app.engine.loop.model_set import ModelSet, describe_model
from desktop_app.engine.loop.prompt_fit import FitCancelled
from desktop_app.engine.loop.prompts import PromptBuilder
from desktop_app.engine.stats import GenerationStats


class Engine:
    """One lock around four parts, each its own object:

    - ``models`` (:class:`ModelSet`): loads, replaces and closes the target and the draft, and
      keeps the contexts that draft from them (MTP head, assistant) and the thread tuner;
    - ``drafting`` (:class:`DrafterFactory`): which drafters the models allow and the drafter
      instances an answer uses, with the n-gram cache's knowledge;
    - ``auto`` (:class:`AutoSetup`): Auto's measured costs and what it learned per drafter, and
      the policies built from them;
    - ``prompts`` (:class:`PromptBuilder`): the chat template, fitting a conversation to the
      context, and the last answer's tokens reused for the next prompt.

    :meth:`generate` composes them; every public method takes the lock (an answer, a load and a
    history sync never overlap). ``thread_memory`` keeps measured thread counts and
    ``cost_memory`` Auto's costs for the next process (None: each process measures anew)."""

    def __init__(self, thread_memory: ThreadMemory | None = None, cost_memory: CostMemory | None = None) -> None:
        self._lock = threading.Lock()
        self.models = ModelSet(self._set_threads, thread_memory)
        self.drafting = DrafterFactory(self.models)
        self.auto = AutoSetup(self._set_threads)
        self._cost_memory = cost_memory
        self.prompts = PromptBuilder(self.models)
        self.clock: Callable[[], float] = time.perf_counter  # what answers are timed by (a replay's is virtual)

    # The models (a replay swaps the target, its thread tuner and the clock for the length of a bench).
    @property
    def target(self) -> LlamaModel | None:
        return self.models.target

    @target.setter
    def target(self, model: LlamaModel | None) -> None:
        self.models.target = model

    @property
    def draft(self) -> LlamaModel | AssistantWeights | None:
        return self.models.draft

    @property
    def threads(self) -> ThreadTuner:
        return self.models.threads

    @threads.setter
    def threads(self, tuner: ThreadTuner) -> None:
        self.models.threads = tuner

    @property
    def ngrams(self) -> ChatNgrams:
        return self.drafting.ngrams

    # ------------------------------------------------------------------ loading
    def load_target(
        self, path: str | Path, options: ModelOptions | None = None, progress: ProgressFn | None = None
    ) -> ModelInfo:
        """Load (or replace) the target (``progress``: 0..1); on failure the previous one stays."""
        with self._lock:
            return self.prompts.describe(self.models.load_target(path, options, progress, self._new_target))

    def _new_target(self, model: LlamaModel) -> None:
        self.drafting.on_target(model)
        self.auto.forget(target_costs=True)
        self._pair_changed()
        self.prompts.on_target(model)

    def _pair_changed(self) -> None:
        """Tell Auto which pair it plans for (what is kept for it, its prior's figures)."""
        if self.models.target is not None:
            self.auto.on_models(self.models.target, self.models.draft, self._cost_memory)

    def load_draft(
        self, path: str | Path, options: ModelOptions | None = None, progress: ProgressFn | None = None
    ) -> DraftCompatibility:
        """Load a draft model; raises IncompatibleDraftError naming what differs."""
        self._require_target()
        with self._lock:
            verdict = self.models.load_draft(path, options, progress)
            self.auto.forget(target_costs=True)
            self._pair_changed()
            return verdict

    def forget_learning(self) -> None:
        """Drop what Auto learned of this pair: its costs (measured again on first use), the
        acceptance and copy runs it tracked, and when it next probes."""
        self.auto.forget()

    def unload_draft(self) -> None:
        with self._lock:
            if self.models.unload_draft():
                self.auto.costs.clear()
                self._pair_changed()

    def embed(
        self, texts: Sequence[str], cancel: threading.Event | None = None, between: Callable[[], None] | None = None
    ) -> Embeddings:
        """Unit vectors of ``texts`` from the target's pooled hidden states (see :mod:`embeddings`:
        at most MAX_REQUEST_TOKENS in all, all checked first; ``cancel`` stops it before the next
        text). ``between`` is called between two texts with the engine free (the engine process
        answers the chats waiting meanwhile there): a long request does not hold the engine."""
        return embed_in_turns(self._lock, self.models.embedder, texts, cancel, between)

    def close(self) -> None:
        self.unload_draft()
        with self._lock:  # a history sync may be tokenizing with the target (history_vocab)
            self.models.close()

    def _set_threads(self, count: int, batch_count: int | None = None) -> None:
        """Every context decodes one token with ``count`` threads and more with ``batch_count``
        (the tuner's choices: they differ only while a trial times one-token passes), and Auto
        plans with the costs measured at the batch count (the count that stands)."""
        batch_count = batch_count or count
        self.auto.use_threads(batch_count)
        self.models.set_threads(count, batch_count)

    def forget_last_answer(self) -> None:
        """Tokenize the next chat prompt from its text alone, not the last answer's tokens (benchmarks)."""
        self.prompts.forget_last_answer()

    def history_vocab(self) -> HistoryVocab:
        """The target's tokenizer for a thread syncing the history n-grams (EngineError: no target)."""
        with self._lock:
            return HistoryVocab(self._require_target(), self._lock, lambda: self.target, self.ngrams)

    @staticmethod
    def backend() -> BackendInfo:
        return backend_info()

    def speculation_refusal(self) -> str | None:
        """Why speculation cannot run on this target, or None when it can."""
        return self.drafting.speculation_refusal()

    def _require_target(self) -> LlamaModel:
        return self.models.require_target()

    def loaded(self, draft_error: str | None = None, compatibility: str | None = None) -> LoadedModels:
        """What is loaded now, for the window and the CLI."""
        drafters = self.drafters_available()
        return LoadedModels(
            target=self.prompts.describe(self._require_target()),
            draft=describe_model(self.draft) if self.draft is not None else None,
            draft_compatibility=compatibility,
            draft_error=draft_error,
            speculation_refusal=self.speculation_refusal(),
            drafters=drafters,
            drafting_note=self.drafting_note(drafters),
            backend=self.backend().summary(),
            threads=self.threads.in_use.describe(),
        )

    # ------------------------------------------------------------------ prompts
    def build_prompt(self, request: GenerateRequest, cancel: threading.Event | None = None) -> tuple[list[int], int]:
        """Token ids for the request and how many oldest turns were dropped to fit (PromptBuilder.build)."""
        return self.prompts.build(request, cancel, self.clock)

    def count_prompt(self, request: GenerateRequest) -> PromptSize:
        """The size of this chat request's prompt as ``generate`` would fit it (after a running answer)."""
        with self._lock:
            return self.prompts.count(request, self.clock)

    # ------------------------------------------------------------------ drafters and Auto
    def drafters_available(self) -> tuple[DrafterKind, ...]:
        """The drafters this target (and draft) can use now, in Auto's order of preference."""
        return self.drafting.available()

    def drafting_note(self, drafters: tuple[DrafterKind, ...]) -> str:
        """Which drafting this pair supports, and why (the model bar's and the CLI's line)."""
        return self.drafting.note()

    def calibrate(
        self,
        drafter: Drafter | None,
        k_max: int,
        reps: int = 5,
        depth: int | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> CostModel:
        """Measure the target's cost per batch size and the drafter's per token (AutoSetup.calibrate)."""
        return self.auto.calibrate(self._require_target(), self.threads, drafter, k_max, reps, depth, should_stop)

    def use_costs(self, drafter: DrafterKind, k_max: int, costs: CostModel) -> None:
        """Use these costs for auto with this drafter and maximum k instead of measuring them
        (costs measured elsewhere, or another machine's, as the tests use a GPU's): they stand
        as given, whatever the passes here take, so Auto decides the same on any machine."""
        self.auto.use_costs(drafter, k_max, costs)

    def prepare_auto(
        self,
        drafter: DrafterKind | None = None,
        draft_max: int = DRAFT_K.default,
        should_stop: Callable[[], bool] | None = None,
    ) -> CostModel | None:
        """Measure auto mode's costs now (right after loading) rather than in the first answer,
        for exactly the drafter and maximum k the next answer will use.

        ``should_stop`` is polled between timed decodes: when it says so (the user sent a
        message, the app is closing) this gives way at once, and answers plan without it.
        """
        if self.target is None:
            return None
        with self._lock:
            chosen = self.drafting.candidates_for(GenerateRequest(prompt="", spec=SpecMode.AUTO, drafter=drafter))
            return self.auto.prepare(self._require_target(), self.threads, chosen, draft_max, should_stop)

    def _choice(self, request: GenerateRequest, images: bool = False) -> tuple[DrafterChoice, str]:
        """The answer's drafters, and why some stand aside for a prompt with ``images``."""
        candidates, aside = for_images(self.drafting.candidates_for(request), images)
        if not candidates:
            return DrafterChoice([]), aside
        target = self._require_target()
        k_max = min(request.draft_max, target.max_draft or request.draft_max)
        # never measured here: an answer plans with what is known, or the prior its passes refine
        costs_for = functools.partial(self.auto.known, threads=self.threads.batch_count)
        return self.auto.choice(request.spec, candidates, k_max, copy_limit(target), costs_for), aside

    # ------------------------------------------------------------------ generating
    def generate(self, request: GenerateRequest, cancel: threading.Event | None = None) -> Iterator[Event]:
        """Yield PromptProgress, TextChunk and StatsUpdate events, then one Finished event. The
        answer's times (``ttft_s``) count from here: a wait for the engine counts too."""
        began = self.clock()
        target = self._require_target()
        with self._lock:
            start = _checked(target, request)  # a bad grammar or logit bias fails before any work
            try:
                prompt, dropped = self.build_prompt(request, cancel)
            except FitCancelled:
                yield Finished("", [], GenerationStats(mode=request.spec, finish_reason=FinishReason.CANCELLED))
                return
            self.threads.recall()  # before Auto measures its costs at the count in use
            media = self.prompts.media(prompt)
            choice, aside = self._choice(request, media is not None)
            stats = GenerationStats(
                mode=request.spec,
                drafter=choice.candidates[0].drafter.kind if choice.k_max else NO_DRAFTER,
                draft_max=choice.k_max,
                dropped_turns=dropped,
            )
            config = _loop_config(request, self.prompts, self.auto.tunables.draft_p_min, media, aside)
            loop = SpeculativeLoop(target, config, choice, stats, cancel, self.threads, self.clock, start)
            for event in loop.run(prompt, dropped, began):
                if isinstance(event, Finished):
                    self.prompts.remember(target, self.prompts.last_text if request.messages else "", prompt, event)
                    self.ngrams.learn_turn(
                        *learnable_turn(prompt, event.stats.prompt_tokens_new, media), event.token_ids
                    )
                    self.auto.keep_learned()
                yield event


def _loop_config(
    request: GenerateRequest, prompts: PromptBuilder, p_min: float, media: MediaSpans | None, aside: str
) -> LoopConfig:
    """The loop's settings for a request: its prompt's open reasoning marker and its images
    (``media``, and ``aside``: why some drafters stand aside for them); Auto's ``p_min``."""
    return LoopConfig(
        max_tokens=request.max_tokens,
        sampling=request.sampling,
        stop=request.stop,
        draft_p_min=p_min if request.spec is SpecMode.AUTO else 0.0,
        reasoning=prompts.reasoning.format,
        opened=prompts.opened,
        grammar_triggers=request.grammar_triggers,
        media=media,
        aside=aside,
    )


def _checked(target: LlamaModel, request: GenerateRequest) -> GrammarState | None:
    """The start of the request's grammar (GrammarError: llama.cpp cannot parse it); EngineError
    when its logit bias names a token the target's vocabulary does not have."""
    unknown = [token for token, _ in request.sampling.logit_bias if not 0 <= token < target.n_vocab]
    if unknown:
        raise EngineError(
            f"logit_bias names the token id {unknown[0]}, which is not in this model's vocabulary "
            f"(ids 0 to {target.n_vocab - 1})"
        )
    return (
        GrammarState.compile(target.vocab, target.n_vocab, request.grammar, target.piece)
        if request.grammar is not None
        else None
    )
