"""The messages between the window and its engine process: typed, picklable, llama-free.

Commands go down the pipe (window -> engine process), events come back. Every field is one of
the engine's own types (:mod:`desktop_app.engine.api`), so neither side builds or parses dicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from desktop_app.engine.api import (
    DRAFT_K,
    DrafterKind,
    Embeddings,
    GenerateRequest,
    LayerSplit,
    LoadedModels,
    MessageToolCall,
    ModelOptions,
)
from desktop_app.engine.context_size import PromptSize
from desktop_app.engine.events import PromptProgress
from desktop_app.engine.stats import GenerationStats

Stage = str  # "target" or "draft"
# An API answer's text comes as it is made, at most this often (the HTTP stream's own pace,
# server/jobs.py); the window's comes at CHUNK_FLUSH_S (service.py), its repaints being dearer.
STREAM_FLUSH_S = 0.03
Piece = tuple[str, str]  # answer text and the DrafterKind value whose accepted tokens made it ("": the target's own)


# ---------------------------------------------------------------------- commands
@dataclass(frozen=True)
class AutoPlan:
    """What the next answer will draft with, so the calibration after a load measures exactly that."""

    drafter: DrafterKind | None = None
    draft_max: int = DRAFT_K.default
    measure: bool = True  # False: Auto is not used by default (`specchat serve --spec off`), it measures on first use


@dataclass(frozen=True)
class Load:
    """Load a target ("" is the embedded default model) and optionally a draft; ``history`` is
    the chat history file the n-gram cache learns from ("": none)."""

    def locally(self) -> Load:
        """The same load without workers: every layer on this computer."""
        return replace(self, target_options=replace(self.target_options, workers=(), split=LayerSplit()))

    target: str = ""
    target_options: ModelOptions = field(default_factory=ModelOptions)
    draft: str | None = None
    draft_options: ModelOptions = field(default_factory=ModelOptions)
    plan: AutoPlan = field(default_factory=AutoPlan)
    history: str = ""


@dataclass(frozen=True)
class HistoryChanged:
    """The chat history changed: an answer was saved (``deleted`` False), or messages or
    conversations were deleted or edited away (True: their n-grams must go, this run's too)."""

    deleted: bool = False


@dataclass(frozen=True)
class Generate:
    """Answer ``request``. The window's answers (``raw`` False) come with their tool calls parsed
    out (``Done.calls``) and their text in pieces at most every CHUNK_FLUSH_S; an API answer
    (``raw``) comes as the model wrote it, calls included (the server parses them in the shape
    its client asked for), at most every STREAM_FLUSH_S."""

    id: int
    request: GenerateRequest
    raw: bool = False


@dataclass(frozen=True)
class Cancel:
    """Stop generation ``id`` at its next token (or before it starts, when it is queued)."""

    id: int


@dataclass(frozen=True)
class CountPrompt:
    """Count the tokens of this chat request's prompt (answered with PromptCounted; while
    several wait, only the newest is counted, except those to ``keep``: an API client's, each
    answered in turn)."""

    id: int
    request: GenerateRequest
    keep: bool = False


@dataclass(frozen=True)
class Embed:
    """A unit vector per text from the loaded target (answered with Embedded), in turn with the
    loads and answers before it."""

    id: int
    texts: tuple[str, ...]


@dataclass(frozen=True)
class Shutdown:
    pass


Command = Load | Generate | Cancel | HistoryChanged | CountPrompt | Embed | Shutdown


# ---------------------------------------------------------------------- events
@dataclass(frozen=True)
class Ready:
    pid: int
    backend: str
    backend_name: str
    device: str
    build_warning: str | None = None  # what this llama.cpp build lacks, said once


@dataclass(frozen=True)
class Loading:
    stage: Stage
    path: str


@dataclass(frozen=True)
class LoadProgressed:
    """Rising fractions, at most every PROGRESS_INTERVAL_S, ending on 1.0 when the stage loaded."""

    stage: Stage
    fraction: float


@dataclass(frozen=True)
class Loaded:
    models: LoadedModels


@dataclass(frozen=True)
class LoadFailed:
    """A load failed. ``models`` is what stays loaded (the previous models, or None when none
    is: e.g. a target served by workers is let go before the new one loads); ``bad_file`` is the
    target file that is not a model this engine can load (missing, not GGUF, truncated,
    unsupported), None when the failure was not the file's (a worker, the default model)."""

    message: str
    models: LoadedModels | None = None
    bad_file: str | None = None


@dataclass(frozen=True)
class Pieces:
    """Answer text, coalesced: runs of text from the same source (see :data:`Piece`)."""

    id: int
    pieces: tuple[Piece, ...]


@dataclass(frozen=True)
class PromptRead:
    """How far answer ``id``'s prompt has been read (throttled; the first says how many of the
    oldest messages were left out)."""

    id: int
    progress: PromptProgress


@dataclass(frozen=True)
class PromptCounted:
    """The answer to CountPrompt ``id``: the prompt's size, or why it could not be counted."""

    id: int
    size: PromptSize | None
    error: str = ""


@dataclass(frozen=True)
class Embedded:
    """The answer to Embed ``id``: the vectors, or None and why (``user_error``: the texts' fault,
    e.g. one longer than an embedding takes; else the engine's)."""

    id: int
    result: Embeddings | None
    error: str = ""
    user_error: bool = True


@dataclass(frozen=True)
class LiveStats:
    id: int
    stats: GenerationStats


@dataclass(frozen=True)
class Done:
    """The answer's final text; with tools offered, its text without the calls it made, and the calls."""

    id: int
    text: str
    stats: GenerationStats
    calls: tuple[MessageToolCall, ...] = ()


@dataclass(frozen=True)
class Failed:
    """Answer ``id`` failed: why; ``user_error`` when the request was at fault (else the engine)."""

    id: int
    message: str
    user_error: bool = True


@dataclass(frozen=True)
class Fatal:
    """The process is about to end (llama.cpp cannot go on, e.g. a worker was lost): why."""

    message: str


EngineEvent = (
    Ready
    | Loading
    | LoadProgressed
    | Loaded
    | LoadFailed
    | PromptRead
    | Pieces
    | LiveStats
    | Done
    | Failed
    | Fatal
    | PromptCounted
    | Embedded
)
