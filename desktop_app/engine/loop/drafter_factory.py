"""Which drafters the loaded models allow, and the drafter instances an answer drafts with.

The n-gram cache drafter's knowledge (:class:`ChatNgrams`: the chat history and this session)
lives here too: it outlives answers and is cleared only for a target of another vocabulary.
"""

from __future__ import annotations

from desktop_app.engine.api import (
    DRAFT_FREE,
    DRAFTER_PREFERENCE,
    DrafterKind,
    GenerateRequest,
    SpecMode,
    choose_drafter,
)
from desktop_app.engine.drafters import Drafter
from desktop_app.engine.drafters.model_drafter import ModelDrafter
from desktop_app.engine.drafters.ngram_cache import ChatNgrams, NgramCacheDrafter
from desktop_app.engine.drafters.ngram_map import NgramMapDrafter
from desktop_app.engine.drafters.prompt_lookup import PromptLookupDrafter
from desktop_app.engine.llama.drafting import drafting_support, rollback_refusal
from desktop_app.engine.llama.model import LlamaModel
from desktop_app.engine.loop.model_set import ModelSet


class DrafterFactory:
    def __init__(self, models: ModelSet) -> None:
        self._models = models
        self.ngrams = ChatNgrams()  # what the n-gram cache drafter knows: the history and this session
        self._ngrams_vocab: str | None = None  # the vocabulary whose token ids it holds

    def on_target(self, model: LlamaModel) -> None:
        if self._ngrams_vocab not in (None, model.vocab_fingerprint):
            self.ngrams.clear()  # token ids of another vocabulary (the history sync refills it)
        self._ngrams_vocab = model.vocab_fingerprint

    def speculation_refusal(self) -> str | None:
        """Why speculation cannot run on this target, or None when it can."""
        target = self._models.require_target()
        if not target.can_roll_back:  # what llama.cpp reports for the context, not only the file
            return rollback_refusal(target.info, True) or (
                f"{target.name} cannot roll its recurrent state back here: speculation stays off"
            )
        return None

    def available(self) -> tuple[DrafterKind, ...]:
        """The drafters this target (and draft) can use now, in Auto's order of preference."""
        models = self._models
        if models.target is None or self.speculation_refusal():
            return ()
        kinds = list(DRAFT_FREE)
        if isinstance(models.draft, LlamaModel):
            kinds.append(DrafterKind.MODEL)
        if models.assistant is not None:
            kinds.append(DrafterKind.ASSISTANT)
        if models.mtp is not None:
            kinds.append(DrafterKind.MTP)
        return tuple(k for k in DRAFTER_PREFERENCE if k in kinds)

    def note(self) -> str:
        """Which drafting this pair supports, and why (the model bar's and the CLI's line)."""
        models = self._models
        target = models.require_target()
        support = drafting_support(
            target.info, models.draft.info if models.draft is not None else None, target.is_recurrent
        )
        note = support.summary()
        if models.mtp_error:
            note += f"; its MTP layers cannot draft here: {models.mtp_error}"
        return note

    def drafter_for(self, requested: DrafterKind | None) -> Drafter | None:
        """The drafter instance for a request (None when this target cannot speculate)."""
        available = self.available()
        if not available:
            return None
        return self.drafter(choose_drafter(requested, available))

    def drafter(self, kind: DrafterKind) -> Drafter:
        models = self._models
        if kind is DrafterKind.MTP and models.mtp is not None:
            return models.mtp
        if kind is DrafterKind.ASSISTANT and models.assistant is not None:
            return models.assistant
        if kind is DrafterKind.MODEL and isinstance(models.draft, LlamaModel):
            return ModelDrafter(models.draft)
        if kind is DrafterKind.NGRAM_MAP:
            return NgramMapDrafter()
        if kind is DrafterKind.NGRAM_CACHE:
            return NgramCacheDrafter(self.ngrams)
        return PromptLookupDrafter()

    def candidates_for(self, request: GenerateRequest) -> list[Drafter]:
        """Who may draft the answer: the drafter asked for (or the best one) with speculation
        on; with Auto and no drafter asked for, every drafter available, to choose per cycle."""
        available = self.available()
        if request.spec is SpecMode.OFF or not available:
            return []
        if request.spec is SpecMode.AUTO and request.drafter is None:
            return [self.drafter(kind) for kind in available]
        return [self.drafter(choose_drafter(request.drafter, available))]
