"""Errors the engine raises. Each carries a message meant for the user, not a traceback."""

from __future__ import annotations


class EngineError(Exception):
    """Base class: something the user can read and act on."""


class ModelNotFoundError(EngineError):
    """A model file is missing."""


class ModelLoadError(EngineError):
    """A model file exists but cannot be loaded (not GGUF, truncated, unsupported, too large)."""


class IncompatibleDraftError(EngineError):
    """The draft model cannot propose tokens for this target; ``reasons`` says what differs."""

    def __init__(self, reasons: list[str]) -> None:
        self.reasons = list(reasons)
        super().__init__("Draft model is incompatible with the target: " + "; ".join(self.reasons))


class ContextOverflowError(EngineError):
    """The prompt does not fit in the context window."""


class EmptyPromptError(EngineError):
    """The prompt has no tokens to continue from (an empty raw prompt on a model without BOS)."""


class TemplateError(EngineError):
    """A chat template failed to render (or tried something the sandbox forbids)."""


class DecodeError(EngineError):
    """llama_decode failed."""


class WorkerError(EngineError):
    """A remote worker cannot be reached, is not a specchat worker, or was lost."""


class PromptFitTimeoutError(EngineError):
    """Dropping old turns to fit the context ran past its time budget (a pathological request)."""


class GrammarError(EngineError):
    """A request's grammar (GBNF) cannot be parsed, or it allows no token where the answer must go on."""


class EmbeddingLimitError(EngineError):
    """One embeddings request's texts take more tokens than a request may (the caller's limit)."""


class EmbeddingCancelled(EngineError):
    """The embeddings request was cancelled (its client went away) before its last text."""
