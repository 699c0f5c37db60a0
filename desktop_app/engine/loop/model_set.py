"""The models loaded now: a target, an optional draft, and the drafting contexts opened on them.

A :class:`ModelSet` loads, replaces and closes models and keeps the contexts that draft from the
target (its own MTP head, a Gemma 4 assistant's) in step with them. It takes no lock: the engine
calls it under its own.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from desktop_app.engine.api import ModelInfo, ModelOptions
from desktop_app.engine.context_size import kv_bytes_per_token
from desktop_app.engine.drafters.assistant import AssistantDrafter
from desktop_app.engine.drafters.mtp import MtpDrafter
from desktop_app.engine.errors import EngineError, IncompatibleDraftError
from desktop_app.engine.llama import rpc
from desktop_app.engine.llama.compat import DraftCompatibility, check_draft
from desktop_app.engine.llama.drafting import is_assistant
from desktop_app.engine.llama.embeddings import Embedder
from desktop_app.engine.llama.gguf_file import read_gguf
from desktop_app.engine.llama.model import LlamaModel, ProgressFn
from desktop_app.engine.llama.nextn import AssistantWeights, NextnContext, require_assistant_fits
from desktop_app.engine.llama.prompt_cache import PromptCacheUsage
from desktop_app.engine.llama.template_reasoning import NO_REASONING, TemplateReasoning
from desktop_app.engine.llama.thread_memory import ThreadMemory, model_fingerprint
from desktop_app.engine.llama.threads import ThreadTuner
from desktop_app.engine.tool_calls import ToolFormat


def describe_model(
    model: LlamaModel | AssistantWeights, reasoning: TemplateReasoning = NO_REASONING, tools: ToolFormat | None = None
) -> ModelInfo:
    """What the window and the CLI show of a loaded model (``reasoning``, ``tools``: its
    template's, for a target)."""
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
        reasoning_format=reasoning.format,
        think_default=reasoning.switch.default if reasoning.switch is not None else None,
        n_ctx_train=model.info.context_length or 0,
        kv_bytes_per_token=kv_bytes_per_token(model.info.metadata, model.info.architecture)
        if isinstance(model, LlamaModel)
        else 0,
        tool_format=tools,
        projector=model.projector.path.name if isinstance(model, LlamaModel) and model.projector else "",
    )


class ModelSet:
    """The target, the draft, and what drafts from them.

    ``apply_threads(count, batch_count)`` is the engine's: it sets every context's threads (see
    :meth:`set_threads`) and tells Auto which costs stand. Each target gets a new thread tuner
    that calls it, and remembers what it measures in ``thread_memory`` (None: nowhere)."""

    def __init__(
        self, apply_threads: Callable[[int, int | None], None], thread_memory: ThreadMemory | None = None
    ) -> None:
        self._apply_threads = apply_threads
        self._thread_memory = thread_memory
        self.target: LlamaModel | None = None
        self.draft: LlamaModel | AssistantWeights | None = None
        self.mtp: MtpDrafter | None = None  # the target's own MTP head, when it has one
        self.assistant: AssistantDrafter | None = None  # a Gemma 4 assistant draft's drafter
        self.mtp_error: str | None = None  # why the target's MTP layers cannot draft
        self.threads = ThreadTuner(self._apply_threads)  # replaced with each target (its options)
        self._embedder: Embedder | None = None  # the target's embedding context, made when first asked

    def embedder(self) -> Embedder:
        """The target's embedding context (a second context on its weights), made on first use."""
        target = self.require_target()
        if self._embedder is None or self._embedder.model is not target:
            self._close_embedder()
            self._embedder = Embedder(target)
        return self._embedder

    def _close_embedder(self) -> None:
        if self._embedder is not None:
            self._embedder.close()
            self._embedder = None

    def prompt_cache_usage(self) -> PromptCacheUsage:
        """What the target's and the draft's prompt caches hold now, together."""
        usage = PromptCacheUsage(0, 0, 0, 0)
        for model in (self.target, self.draft):
            if isinstance(model, LlamaModel):
                usage += model.prompt_store.usage()
        return usage

    def require_target(self) -> LlamaModel:
        if self.target is None:
            raise EngineError("No target model is loaded")
        return self.target

    def load_target(
        self,
        path: str | Path,
        options: ModelOptions | None,
        progress: ProgressFn | None,
        on_target: Callable[[LlamaModel], None],
    ) -> LlamaModel:
        """Load (or replace) the target and reopen what drafts from it; ``on_target`` is called
        with the new target as soon as it replaced the old one (before the drafting contexts
        open). On failure the previous target stays loaded, unless workers served it: a worker
        serves one computer at a time."""
        self._close_embedder()  # its context lives on the target's weights
        if self.target is not None and (self.target.options.workers or (options and options.workers)):
            # The old target lets go of its workers first (so a failed load here leaves no target).
            self.close_drafting_contexts()
            self.target.close()
            self.target = None
        model = LlamaModel(path, options, progress)
        try:
            model.open_projector()  # a target's vision projector (mmproj), when it has one
        except BaseException:
            model.close()
            raise
        self.close_drafting_contexts()  # they refer to the old target's context
        if self.target is not None:
            self.target.close()
        self.target = model
        memory = self._thread_memory
        self.threads = ThreadTuner(
            self._apply_threads,
            fixed=model.options.n_threads,
            memory=memory.for_model(model_fingerprint(model.info, model.options)) if memory is not None else None,
        )
        on_target(model)
        self._open_mtp(model)
        if self.draft is not None:
            try:
                self._attach_draft(model, self.draft)
            except IncompatibleDraftError:
                self.draft.close()
                self.draft = None
        self._apply_threads(self.threads.count, None)
        return model

    def load_draft(
        self, path: str | Path, options: ModelOptions | None, progress: ProgressFn | None
    ) -> DraftCompatibility:
        """Load a draft model; raises IncompatibleDraftError naming what differs (the previous
        draft then stays)."""
        target = self.require_target()
        info = read_gguf(path)
        if is_assistant(info):
            require_assistant_fits(target.info, info)  # before loading: a mismatch crashes llama.cpp
            model: LlamaModel | AssistantWeights = AssistantWeights(path, options, progress)
        else:
            model = LlamaModel(path, options, progress)
        self.close_drafting_contexts(keep_mtp=True)
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
        self._apply_threads(self.threads.count, None)
        return verdict

    def unload_draft(self) -> bool:
        """Close the draft; whether there was one."""
        self.close_drafting_contexts(keep_mtp=True)
        if self.draft is None:
            return False
        self.draft.close()
        self.draft = None
        return True

    def close(self) -> None:
        self.unload_draft()
        self.close_drafting_contexts()
        self._close_embedder()
        if self.target is not None:
            self.target.close()
            self.target = None

    def set_threads(self, count: int, batch_count: int) -> None:
        """Every context decodes one token with ``count`` threads and more with ``batch_count``."""
        if self.target is not None:
            self.target.set_threads(count, batch_count)
        if isinstance(self.draft, LlamaModel):
            self.draft.set_threads(count, batch_count)
        for drafter in (self.mtp, self.assistant):
            if drafter is not None:
                drafter.ctx.set_threads(count, batch_count)

    def close_drafting_contexts(self, keep_mtp: bool = False) -> None:
        if self.assistant is not None:
            self.assistant.ctx.close()
            self.assistant = None
        if self.mtp is not None and not keep_mtp:
            self.mtp.ctx.close()
            self.mtp = None

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
        self.mtp = MtpDrafter(target, context)

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
            self.assistant = AssistantDrafter(target, NextnContext(draft.pointer, target))
        return verdict
