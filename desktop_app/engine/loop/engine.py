"""The engine's public surface: load a target (and optionally a draft), generate, cancel.

No Qt here. One Engine is used by one thread at a time (the GUI runs it in a child process).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from desktop_app.engine.api import (
    DRAFT_FREE,
    DRAFT_K,
    DRAFTER_PREFERENCE,
    DrafterKind,
    GenerateRequest,
    LoadedModels,
    ModelInfo,
    ModelOptions,
    SpecMode,
    choose_drafter,
)
from desktop_app.engine.auto.cost_model import CostModel
from desktop_app.engine.auto.drafter_choice import DrafterChoice
from desktop_app.engine.auto.policy import (
    HOT_PRIOR,
    PRIOR_WEIGHT,
    AcceptanceTracker,
    AutoPolicy,
    FixedPolicy,
    OffPolicy,
    Policy,
    ProbeBackoff,
    RunTracker,
)
from desktop_app.engine.drafters import CostProbe, Drafter
from desktop_app.engine.drafters.assistant import AssistantDrafter
from desktop_app.engine.drafters.history_vocab import HistoryVocab
from desktop_app.engine.drafters.model_drafter import ModelDrafter
from desktop_app.engine.drafters.mtp import MtpDrafter
from desktop_app.engine.drafters.ngram_cache import ChatNgrams, NgramCacheDrafter
from desktop_app.engine.drafters.ngram_map import NgramMapDrafter
from desktop_app.engine.drafters.prompt_lookup import PromptLookupDrafter
from desktop_app.engine.errors import ContextOverflowError, EmptyPromptError, EngineError, IncompatibleDraftError
from desktop_app.engine.events import Event, Finished
from desktop_app.engine.llama import rpc
from desktop_app.engine.llama.backend import BackendInfo, backend_info
from desktop_app.engine.llama.chat_template import ChatTemplate, Message, validate_messages
from desktop_app.engine.llama.compat import DraftCompatibility, check_draft
from desktop_app.engine.llama.drafting import drafting_support, is_assistant, rollback_refusal
from desktop_app.engine.llama.gguf_file import read_gguf
from desktop_app.engine.llama.model import LlamaModel, ProgressFn
from desktop_app.engine.llama.nextn import AssistantWeights, NextnContext, require_assistant_fits
from desktop_app.engine.llama.threads import ThreadTuner
from desktop_app.engine.llama.timing import CalibrationInterrupted, time_decodes, tune_threads
from desktop_app.engine.loop.generator import LoopConfig, SpeculativeLoop
from desktop_app.engine.loop.prompt_fit import FitCancelled, PromptFitter, TokenCounts
from desktop_app.engine.stats import GenerationStats

AUTO_DRAFT_P_MIN = 0.4
CALIBRATION_DEPTH = 160  # tokens of context behind the timed decodes
MIN_ANSWER_ROOM = 64


def _batch_costs(target: LlamaModel, k_max: int, token: int, depth: int, reps: int,
                 should_stop: Callable[[], bool] | None) -> list[float]:
    batch_s = time_decodes(target, list(range(1, k_max + 2)), token, depth, reps, should_stop)
    # A bigger batch never costs less: smooth out timing noise (running minimum from the right).
    for b in range(len(batch_s) - 2, -1, -1):
        batch_s[b] = min(batch_s[b], batch_s[b + 1])
    return batch_s


def _special_text(model: LlamaModel, token: int) -> str:
    return model.token_text(token).decode(errors="replace") if token >= 0 else ""


class Engine:
    def __init__(self) -> None:
        self.target: LlamaModel | None = None
        self.draft: LlamaModel | AssistantWeights | None = None
        self._mtp: MtpDrafter | None = None  # the target's own MTP head, when it has one
        self._assistant: AssistantDrafter | None = None  # a Gemma 4 assistant draft's drafter
        self.mtp_error: str | None = None  # why the target's MTP layers cannot draft
        self.template: ChatTemplate | None = None
        self._costs: dict[tuple[DrafterKind | None, int], CostModel] = {}
        # seconds per target batch of 1..k+1, per k_max, per thread count (the shape differs: on 2
        # cores a batch of 9 costs 4x one token with 2 threads, 5.7x with 1)
        self._target_costs: dict[int, dict[int, list[float]]] = {}
        self.ngrams = ChatNgrams()  # what the n-gram cache drafter knows: the history and this session
        self._ngrams_vocab: str | None = None  # the vocabulary whose token ids it holds
        self._lock = threading.Lock()
        self._acceptance: dict[str, AcceptanceTracker] = {}
        self._runs: dict[str, RunTracker] = {}  # model-free drafters' copy runs, per drafter
        self._probes: dict[str, ProbeBackoff] = {}  # when Auto next probes a drafter it left off
        self._history: tuple[str, list[int]] = ("", [])  # last chat prompt + answer, as text and tokens
        self._last_prompt_text = ""
        self._token_counts = TokenCounts(self._tokenize_text)  # per message text, for fitting prompts
        self.threads = ThreadTuner(self._set_threads)  # replaced with each target (its options)
        self.clock: Callable[[], float] = time.perf_counter  # what answers are timed by (a replay's is virtual)

    # ------------------------------------------------------------------ loading
    def load_target(
        self, path: str | Path, options: ModelOptions | None = None, progress: ProgressFn | None = None
    ) -> ModelInfo:
        """Load (or replace) the target; ``progress`` gets 0..1 while loading. On failure the
        previous target stays loaded."""
        with self._lock:
            if self.target is not None and (self.target.options.workers or (options and options.workers)):
                # A worker serves one computer at a time: the old target lets go of it first
                # (so a failed load here leaves no target).
                self._close_drafting_contexts()
                self.target.close()
                self.target = None
            model = LlamaModel(path, options, progress)
            self._close_drafting_contexts()  # they refer to the old target's context
            if self.target is not None:
                self.target.close()
            self.target = model
            self.threads = ThreadTuner(self._set_threads, fixed=model.options.n_threads)
            if self._ngrams_vocab not in (None, model.vocab_fingerprint):
                self.ngrams.clear()  # token ids of another vocabulary (the history sync refills it)
            self._ngrams_vocab = model.vocab_fingerprint
            self._target_costs.clear()
            self.forget_learning()
            self._history = ("", [])
            self._token_counts = TokenCounts(self._tokenize_text)  # counts in the old vocabulary are wrong now
            self.template = ChatTemplate(
                model.info.chat_template, _special_text(model, model.bos_id), _special_text(model, model.eos_id),
                origin=model.path.name,
            )
            self._open_mtp(model)
            if self.draft is not None:
                try:
                    self._attach_draft(model, self.draft)
                except IncompatibleDraftError:
                    self.draft.close()
                    self.draft = None
            self._set_threads(self.threads.count)
            return self.describe(model)

    def _open_mtp(self, target: LlamaModel) -> None:
        self.mtp_error = None
        if not target.has_mtp:
            return
        try:
            context = NextnContext(target.handle[0], target)
        except EngineError as exc:  # an older llama-cpp-python, or a context llama.cpp refused
            self.mtp_error = str(exc)
            return
        target.enable_hidden_rows()
        self._mtp = MtpDrafter(target, context)

    def _attach_draft(self, target: LlamaModel, draft: LlamaModel | AssistantWeights) -> DraftCompatibility:
        """Check a draft against the target (vocabulary, and an assistant's architecture) and
        open what it drafts with; raises IncompatibleDraftError naming what differs."""
        if isinstance(draft, AssistantWeights):
            require_assistant_fits(target.info, draft.info)
        verdict = check_draft(target, draft)
        if not verdict.compatible:
            raise IncompatibleDraftError(verdict.reasons)
        if isinstance(draft, AssistantWeights):
            target.enable_hidden_rows()
            self._assistant = AssistantDrafter(target, NextnContext(draft.pointer, target))
        return verdict

    def _set_threads(self, count: int, batch_count: int | None = None) -> None:
        """Every context decodes one token with ``count`` threads and more with ``batch_count``
        (the tuner's choices: they differ only while a trial times one-token passes), and Auto
        plans with the costs measured at the batch count (the count that stands)."""
        batch_count = batch_count or count
        for costs in self._costs.values():
            costs.use_threads(batch_count)
        if self.target is not None:
            self.target.set_threads(count, batch_count)
        if isinstance(self.draft, LlamaModel):
            self.draft.set_threads(count, batch_count)
        for drafter in (self._mtp, self._assistant):
            if drafter is not None:
                drafter.ctx.set_threads(count, batch_count)

    def _close_drafting_contexts(self, keep_mtp: bool = False) -> None:
        if self._assistant is not None:
            self._assistant.ctx.close()
            self._assistant = None
        if self._mtp is not None and not keep_mtp:
            self._mtp.ctx.close()
            self._mtp = None

    def load_draft(
        self, path: str | Path, options: ModelOptions | None = None, progress: ProgressFn | None = None
    ) -> DraftCompatibility:
        """Load a draft model; raises IncompatibleDraftError naming what differs."""
        target = self._require_target()
        with self._lock:
            info = read_gguf(path)
            if is_assistant(info):
                require_assistant_fits(target.info, info)  # before loading: a mismatch crashes llama.cpp
                model: LlamaModel | AssistantWeights = AssistantWeights(path, options, progress)
            else:
                model = LlamaModel(path, options, progress)
            self._close_drafting_contexts(keep_mtp=True)
            try:
                verdict = self._attach_draft(target, model)
            except BaseException:
                model.close()
                if self.draft is not None:
                    self._attach_draft(target, self.draft)  # the previous draft stays
                raise
            if self.draft is not None:
                self.draft.close()
            self.draft = model
            self._set_threads(self.threads.count)
            self._target_costs.clear()
            self.forget_learning()
            return verdict

    def forget_learning(self) -> None:
        """Drop what Auto learned of this pair: its costs (measured again on first use), the
        acceptance and copy runs it tracked, and when it next probes."""
        self._costs.clear()
        self._acceptance.clear()
        self._runs.clear()
        self._probes.clear()

    def unload_draft(self) -> None:
        with self._lock:
            self._close_drafting_contexts(keep_mtp=True)
            if self.draft is not None:
                self.draft.close()
                self.draft = None
                self._costs.clear()

    def close(self) -> None:
        self.unload_draft()
        with self._lock:  # a history sync may be tokenizing with the target (history_vocab)
            self._close_drafting_contexts()
            if self.target is not None:
                self.target.close()
                self.target = None

    def forget_last_answer(self) -> None:
        """Tokenize the next chat prompt from its text alone, not reusing the last answer's
        generated tokens (benchmarks: every mode then sees the same prompt tokens)."""
        self._history = ("", [])

    def history_vocab(self) -> HistoryVocab:
        """The target's tokenizer for a thread syncing the history n-grams (waits for a running
        answer or load); EngineError when no target is loaded."""
        with self._lock:
            return HistoryVocab(self._require_target(), self._lock, lambda: self.target, self.ngrams)

    @staticmethod
    def describe(model: LlamaModel | AssistantWeights) -> ModelInfo:
        return ModelInfo(
            path=str(model.path),
            name=model.name,
            architecture=model.info.architecture,
            n_params=model.info.n_parameters,
            quantization=model.info.quantization,
            size_bytes=model.info.file_size,
            n_ctx=model.n_ctx,
            n_gpu_layers=model.options.n_gpu_layers,
            placement=model.placement.describe() if isinstance(model, LlamaModel) and model.placement else "",
            remote_devices=tuple(rpc.device_lines(model.remote)) if isinstance(model, LlamaModel) else (),
        )

    @staticmethod
    def backend() -> BackendInfo:
        return backend_info()

    def speculation_refusal(self) -> str | None:
        """Why speculation cannot run on this target, or None when it can."""
        target = self._require_target()
        if not target.can_roll_back:  # what llama.cpp reports for the context, not only the file
            return rollback_refusal(target.info, True) or (
                f"{target.name} cannot roll its recurrent state back here: speculation stays off")
        return None

    def _require_target(self) -> LlamaModel:
        if self.target is None:
            raise EngineError("No target model is loaded")
        return self.target

    # ------------------------------------------------------------------ prompts
    def build_prompt(self, request: GenerateRequest, cancel: threading.Event | None = None) -> tuple[list[int], int]:
        """Token ids for the request and how many oldest turns were dropped to fit (see
        prompt_fit). Raises FitCancelled when ``cancel`` is set meanwhile."""
        target = self._require_target()
        if request.prompt is not None:
            tokens = target.tokenize(request.prompt, add_special=True, parse_special=request.parse_special)
            if not tokens:
                # Generation continues from the last prompt token: with no BOS there is none.
                raise EmptyPromptError("The prompt is empty: give some text to continue")
            self._check_fits(tokens, request)
            return tokens, 0
        messages = validate_messages(list(request.messages or []))
        limit = target.n_ctx - min(request.max_tokens, MIN_ANSWER_ROOM)
        fitter = PromptFitter(self._render, self._token_counts, limit, cancel, clock=self.clock)
        kept_from, text, tokens = fitter.fit(messages)
        self._last_prompt_text = text
        if len(tokens) > limit:  # even the last message alone leaves too little room
            self._check_fits(tokens, request)
        return tokens, kept_from - (1 if messages[0]["role"] == "system" else 0)

    def _render(self, messages: Sequence[Message]) -> tuple[str, list[int]]:
        """The prompt text for these messages and its tokens."""
        target = self._require_target()
        assert self.template is not None
        text = self.template.render(messages, add_generation_prompt=True)
        # Re-tokenizing our own earlier answer need not give the tokens we generated (BPE is
        # not canonical), which would spoil the KV cache. Reuse them when the text matches.
        hist_text, hist_tokens = self._history
        if hist_tokens and len(text) > len(hist_text) and text.startswith(hist_text):
            return text, hist_tokens + target.tokenize(text[len(hist_text) :], add_special=False, parse_special=True)
        bos_text = self.template.bos_token
        add_special = target.add_bos and not (bos_text and text.startswith(bos_text))
        return text, target.tokenize(text, add_special=add_special, parse_special=True)

    def _tokenize_text(self, text: str) -> list[int]:
        return self._require_target().tokenize(text, add_special=False, parse_special=True)

    def _check_fits(self, tokens: list[int], request: GenerateRequest) -> None:
        target = self._require_target()
        if len(tokens) + 1 > target.n_ctx:
            raise ContextOverflowError(
                f"The message is {len(tokens)} tokens long but the context holds {target.n_ctx}: "
                "shorten it or load the model with a larger context"
            )

    # ------------------------------------------------------------------ generating
    def drafters_available(self) -> tuple[DrafterKind, ...]:
        """The drafters this target (and draft) can use now, in Auto's order of preference."""
        if self.target is None or self.speculation_refusal():
            return ()
        kinds = list(DRAFT_FREE)
        if isinstance(self.draft, LlamaModel):
            kinds.append(DrafterKind.MODEL)
        if self._assistant is not None:
            kinds.append(DrafterKind.ASSISTANT)
        if self._mtp is not None:
            kinds.append(DrafterKind.MTP)
        return tuple(k for k in DRAFTER_PREFERENCE if k in kinds)

    def drafting_note(self, drafters: tuple[DrafterKind, ...]) -> str:
        """Which drafting this pair supports, and why (the model bar's and the CLI's line)."""
        target = self._require_target()
        support = drafting_support(target.info, self.draft.info if self.draft is not None else None,
                                   target.is_recurrent)
        note = support.summary()
        if self.mtp_error:
            note += f"; its MTP layers cannot draft here: {self.mtp_error}"
        return note

    def loaded(self, draft_error: str | None = None, compatibility: str | None = None) -> LoadedModels:
        """What is loaded now, for the window and the CLI."""
        target = self._require_target()
        drafters = self.drafters_available()
        return LoadedModels(
            target=self.describe(target),
            draft=self.describe(self.draft) if self.draft is not None else None,
            draft_compatibility=compatibility,
            draft_error=draft_error,
            speculation_refusal=self.speculation_refusal(),
            drafters=drafters,
            drafting_note=self.drafting_note(drafters),
            backend=self.backend().summary(),
            threads=self.threads.in_use.describe(),
        )

    def drafter_for(self, requested: DrafterKind | None) -> Drafter | None:
        """The drafter instance for a request (None when this target cannot speculate)."""
        available = self.drafters_available()
        if not available:
            return None
        return self._drafter(choose_drafter(requested, available))

    def _drafter(self, kind: DrafterKind) -> Drafter:
        if kind is DrafterKind.MTP and self._mtp is not None:
            return self._mtp
        if kind is DrafterKind.ASSISTANT and self._assistant is not None:
            return self._assistant
        if kind is DrafterKind.MODEL and isinstance(self.draft, LlamaModel):
            return ModelDrafter(self.draft)
        if kind is DrafterKind.NGRAM_MAP:
            return NgramMapDrafter()
        if kind is DrafterKind.NGRAM_CACHE:
            return NgramCacheDrafter(self.ngrams)
        return PromptLookupDrafter()

    def candidates_for(self, request: GenerateRequest) -> list[Drafter]:
        """Who may draft the answer: the drafter asked for (or the best one) with speculation
        on; with Auto and no drafter asked for, every drafter available, to choose per cycle."""
        available = self.drafters_available()
        if request.spec is SpecMode.OFF or not available:
            return []
        if request.spec is SpecMode.AUTO and request.drafter is None:
            return [self._drafter(kind) for kind in available]
        return [self._drafter(choose_drafter(request.drafter, available))]

    def calibrate(
        self, drafter: Drafter | None, k_max: int, reps: int = 5, depth: int = CALIBRATION_DEPTH,
        should_stop: Callable[[], bool] | None = None,
    ) -> CostModel:
        """Measure this machine's target cost per batch size and the drafter's cost per token.

        Measured ``depth`` tokens into the context (attention grows with it), appending to
        whatever the caches hold and trimming back afterwards, so a conversation's cache survives.
        """
        target = self._require_target()
        key = (drafter.kind if drafter is not None else None, k_max)
        if key in self._costs:
            return self._costs[key]
        filler = (target.tokenize(" the", add_special=False) or [max(target.bos_id, 1)])[0]
        tables = self._target_costs.get(k_max)
        if tables is None and self.threads.quiet_count is None:  # the thread count first: costs depend on it
            tune_threads(target, self.threads, filler, depth, should_stop)
        if tables is None:  # measured once per k_max, whoever drafts, at each count the tuner may use
            chosen = self.threads.count
            tables = {}
            try:
                for count in sorted(self.threads.candidates, key=lambda c: c != chosen):
                    self._set_threads(count)
                    tables[count] = _batch_costs(target, k_max, filler, depth, reps if count == chosen else 3,
                                                 should_stop)
            finally:
                self._set_threads(chosen)
            self._target_costs[k_max] = tables
        draft_s = drafter.token_cost_s(CostProbe(filler, depth, reps, should_stop)) if drafter is not None else 0.0
        costs = CostModel(list(tables[self.threads.count]), draft_s,
                          by_threads={c: list(t) for c, t in tables.items()}, threads=self.threads.count)
        self._costs[key] = costs
        return costs

    def use_costs(self, drafter: DrafterKind, k_max: int, costs: CostModel) -> None:
        """Use these costs for auto with this drafter and maximum k instead of measuring them
        (costs measured elsewhere, or another machine's, as the tests use a GPU's): they stand
        as given, whatever the passes here take, so Auto decides the same on any machine."""
        if costs.k_max != k_max:
            raise ValueError(f"costs for k up to {costs.k_max} given for k_max {k_max}")
        self._costs[(drafter, k_max)] = dataclasses.replace(costs, measured=False)

    def prepare_auto(
        self, drafter: DrafterKind | None = None, draft_max: int = DRAFT_K.default,
        should_stop: Callable[[], bool] | None = None,
    ) -> CostModel | None:
        """Measure auto mode's costs now (right after loading) rather than in the first answer,
        for exactly the drafter and maximum k the next answer will use.

        ``should_stop`` is polled between timed decodes: when it says so (the user sent a
        message, the app is closing) this gives way at once and auto measures on first use.
        """
        if self.target is None:
            return None
        with self._lock:
            chosen = self.candidates_for(GenerateRequest(prompt="", spec=SpecMode.AUTO, drafter=drafter))
            if not chosen:
                return None
            k_max = min(DRAFT_K.check(draft_max), self.target.max_draft or draft_max)
            try:
                return [self.calibrate(c, k_max, should_stop=should_stop) for c in chosen][0]
            except CalibrationInterrupted:
                return None

    def _choice(self, request: GenerateRequest) -> DrafterChoice:
        return DrafterChoice([(d, self._policy(request, d)) for d in self.candidates_for(request)])

    def _policy(self, request: GenerateRequest, drafter: Drafter | None) -> Policy:
        if request.spec is SpecMode.OFF or drafter is None:
            return OffPolicy()
        k_max = min(request.draft_max, self._require_target().max_draft or request.draft_max)
        if request.spec is SpecMode.ON:
            return FixedPolicy(k_max)
        # Costs and acceptance carry over between answers: the next turn of a conversation
        # starts from what this pair and this kind of task did last time.
        costs = self.calibrate(drafter, k_max)
        cold = self._acceptance.setdefault(drafter.kind.value, AcceptanceTracker())
        hot = self._acceptance.setdefault(
            drafter.kind.value + ":hot", AcceptanceTracker(HOT_PRIOR * PRIOR_WEIGHT, PRIOR_WEIGHT))
        runs = self._runs.setdefault(drafter.kind.value, RunTracker()) if drafter.free else None
        probes = self._probes.setdefault(drafter.kind.value, ProbeBackoff())
        return AutoPolicy(costs, k_max, probe=not drafter.free, acceptance=cold, hot=hot, runs=runs, probes=probes)

    def generate(self, request: GenerateRequest, cancel: threading.Event | None = None) -> Iterator[Event]:
        """Yield TextChunk and StatsUpdate events, then one Finished event."""
        target = self._require_target()
        with self._lock:
            try:
                prompt, dropped = self.build_prompt(request, cancel)
            except FitCancelled:
                yield Finished("", [], GenerationStats(mode=request.spec.value, finish_reason="cancelled"))
                return
            choice = self._choice(request)
            stats = GenerationStats(
                mode=request.spec.value,
                drafter=choice.candidates[0].name if choice.k_max else "none",
                draft_max=choice.k_max,
            )
            stats.dropped_turns = dropped
            config = LoopConfig(
                max_tokens=request.max_tokens,
                sampling=request.sampling,
                stop=request.stop,
                draft_p_min=AUTO_DRAFT_P_MIN if request.spec is SpecMode.AUTO else 0.0,
            )
            prompt_text = self._last_prompt_text if request.messages is not None else ""
            loop = SpeculativeLoop(target, config, choice, stats, cancel, self.threads, self.clock)
            for event in loop.run(prompt):
                if isinstance(event, Finished):
                    if prompt_text and target.detokenize(event.token_ids) == event.text:
                        self._history = (prompt_text + event.text, prompt + event.token_ids)
                    # the n-gram cache learns this turn: the new part of the prompt and the answer
                    self.ngrams.learn(prompt[len(prompt) - event.stats.prompt_tokens_new:] + event.token_ids)
                yield event
