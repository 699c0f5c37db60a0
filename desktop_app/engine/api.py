"""The engine's vocabulary and its llama-free types: declared once, read by everything else.

Importing this module loads neither llama.cpp nor Qt, so the window, the settings, the CLI's
argument parser and the engine process's pipe all use these types and ranges directly:

- :class:`SpecMode` and :class:`DrafterKind`: the speculation modes and who drafts, with labels;
- :class:`OverflowPolicy`: what happens when a conversation outgrows the context;
- :class:`FinishReason` (why an answer ended) and :data:`NO_DRAFTER` (an answer nobody drafted for);
- :data:`DRAFT_K`, :data:`MAX_TOKENS`, :data:`TEMPERATURE`... : every numeric parameter with its
  range and default (:class:`NumberRange` gives the one error message for a bad value);
- :func:`choose_drafter`: the one decision of which drafter an answer uses;
- :class:`SamplingParams`, :class:`GenerateRequest`, :class:`ModelInfo`, :class:`LoadedModels`, and
  :class:`ModelOptions` with its load parameters (declared in :mod:`~desktop_app.engine.model_options`).

The root of the engine's vocabulary (it imports only the ranges, workers, reasoning formats,
messages and tool formats): :mod:`~desktop_app.engine.stats` and :mod:`~desktop_app.engine.events`,
equally llama-free, type their fields with these enums.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

from desktop_app.engine.messages import Embeddings, FunctionCall, Message, MessageToolCall, Tool
from desktop_app.engine.model_options import MIB, N_CTX, N_THREADS, NGPU_LAYERS, PROMPT_CACHE_MB, ModelOptions
from desktop_app.engine.ranges import NumberRange
from desktop_app.engine.reasoning import ReasoningFormat
from desktop_app.engine.tool_calls import ToolFormat
from desktop_app.engine.workers import WORKER_HOST, WORKER_PORT, LayerSplit, WorkerAddress, parse_workers

__all__ = [
    "API_HOST",
    "API_PORT",
    "DEFAULT_OVERFLOW",
    "DEFAULT_SPEC_MODE",
    "DRAFTER_PREFERENCE",
    "DRAFT_FREE",
    "DRAFT_K",
    "DrafterKind",
    "Embeddings",
    "FinishReason",
    "GenerateRequest",
    "LOGIT_BIAS",
    "LoadedModels",
    "MAX_TOKENS",
    "MIB",
    "MIN_P",
    "FunctionCall",
    "Message",
    "MessageToolCall",
    "ModelInfo",
    "ModelOptions",
    "NGPU_LAYERS",
    "NO_DRAFTER",
    "N_CTX",
    "N_THREADS",
    "PROMPT_CACHE_MB",
    "NoDrafter",
    "NumberRange",
    "OverflowPolicy",
    "REPEAT_LAST_N",
    "REPEAT_PENALTY",
    "SEED",
    "SamplingParams",
    "SpecMode",
    "TEMPERATURE",
    "TOP_K",
    "TOP_P",
    "Tool",
    "WORKER_HOST",
    "WORKER_PORT",
    "LayerSplit",
    "WorkerAddress",
    "Word",
    "choose_drafter",
    "drafter_named",
    "parse_workers",
]


class Word(StrEnum):
    """An enum of the words the engine writes (in JSON, the CLI's lines, the settings file): a member
    equals its word and prints as it, in ``str()`` and f-strings alike."""


class SpecMode(Word):
    """Whether answers are drafted and verified."""

    OFF = "off"
    ON = "on"
    AUTO = "auto"

    @property
    def label(self) -> str:
        return self.value.capitalize()

    @property
    def description(self) -> str:
        return {
            SpecMode.OFF: "plain decoding",
            SpecMode.ON: "always draft k tokens per cycle",
            SpecMode.AUTO: "draft only when it pays on this machine (k up to the maximum)",
        }[self]


DEFAULT_SPEC_MODE = SpecMode.AUTO


class FinishReason(Word):
    """Why an answer ended. The engine gives the first four; the window adds the next two for
    answers that never got the engine's own end (the API maps them onto OpenAI's words); the API
    says the last when the answer it parsed is calls of the request's tools."""

    STOP = "stop"  # the model ended its turn or a stop string matched
    LENGTH = "length"  # max_tokens reached
    CANCELLED = "cancelled"  # the user (or the API's client) stopped it
    CONTEXT_FULL = "context_full"  # the context window has no room for another token
    FAILED = "failed"  # the engine reported an error (the window's record of the answer)
    INTERRUPTED = "interrupted"  # the engine's process was lost mid-answer (the window's record)
    TOOL_CALLS = "tool_calls"  # the answer is calls of the request's tools (the API's, OpenAI's word)


class NoDrafter(Word):
    """The drafter of an answer nobody drafted for (speculation off or not possible): a one-member
    enum, so a drafter is typed ``DrafterKind | NoDrafter`` and "none" is written here only."""

    NONE = "none"


NO_DRAFTER = NoDrafter.NONE


class OverflowPolicy(Word):
    """What a chat request does when its conversation does not fit the context."""

    DROP_OLDEST = "drop_oldest"  # leave the oldest messages out (after any system message)
    REFUSE = "refuse"  # fail at once, saying how long the conversation is and how to fix it

    @property
    def label(self) -> str:
        return "Drop the oldest messages" if self is OverflowPolicy.DROP_OLDEST else "Refuse to answer"

    @property
    def description(self) -> str:
        if self is OverflowPolicy.DROP_OLDEST:
            return "leave the oldest messages out of the model's context (the transcript says so)"
        return "do not answer; say how long the conversation is and how to make room"


DEFAULT_OVERFLOW = OverflowPolicy.DROP_OLDEST


class DrafterKind(Word):
    """Who proposes the tokens the target verifies."""

    MTP = "mtp"  # the target's own next-token-prediction layers
    ASSISTANT = "assistant"  # a Gemma 4 assistant GGUF: drafts from the target's hidden states and cache
    MODEL = "model"  # a separate small GGUF sharing the target's vocabulary
    NGRAM_CACHE = "ngram-cache"  # n-grams learned from the user's chats: no model
    NGRAM_MAP = "ngram-map"  # the most frequent follower of the context's n-grams: no model
    NGRAM = "ngram"  # prompt lookup: copies what followed the same tokens earlier; no model

    @property
    def label(self) -> str:
        """Its name for people, in plain words (the expert's name: :attr:`term`)."""
        return _DRAFTER_WORDS[self][0]

    @property
    def term(self) -> str:
        """What experts call it and how it drafts, for a tooltip next to :attr:`label`."""
        return _DRAFTER_WORDS[self][1]

    @property
    def needs_draft_file(self) -> bool:
        return self in (DrafterKind.ASSISTANT, DrafterKind.MODEL)

    @property
    def needs_model(self) -> bool:
        """Drafting runs a model (a draft, MTP layers, an assistant); the others only look tokens up."""
        return self not in DRAFT_FREE


# Each drafter's plain name (shown everywhere) and its expert's term (in tooltips): declared here only.
_DRAFTER_WORDS: dict[DrafterKind, tuple[str, str]] = {
    DrafterKind.MTP: (
        "Built-in drafter",
        "multi-token prediction (MTP): layers trained with the model guess its next tokens",
    ),
    DrafterKind.ASSISTANT: ("Gemma 4 assistant", "a Gemma 4 assistant model drafts from the model's own hidden states"),
    DrafterKind.MODEL: ("Draft model", "a small model with the same vocabulary guesses the next tokens"),
    DrafterKind.NGRAM_CACHE: ("Your past chats", "n-gram cache: what followed the same words in your saved chats"),
    DrafterKind.NGRAM_MAP: (
        "Common phrases here",
        "n-gram map: the most frequent continuation of the last words in this chat",
    ),
    DrafterKind.NGRAM: (
        "Repeats from this chat",
        "prompt lookup: copies what followed the same words earlier in this chat",
    ),
}

# Drafting without a model: proposals cost microseconds, so Auto scores them every cycle.
DRAFT_FREE: frozenset[DrafterKind] = frozenset({DrafterKind.NGRAM_CACHE, DrafterKind.NGRAM_MAP, DrafterKind.NGRAM})

# The order of preference when one drafter must be picked (speculation "on" with the best
# drafter): drafters trained with the target first, a separate draft model next, then the
# model-free ones, prompt lookup first among them. Auto tries them all, every cycle.
DRAFTER_PREFERENCE: tuple[DrafterKind, ...] = (
    DrafterKind.MTP,
    DrafterKind.ASSISTANT,
    DrafterKind.MODEL,
    DrafterKind.NGRAM,
    DrafterKind.NGRAM_MAP,
    DrafterKind.NGRAM_CACHE,
)


def choose_drafter(requested: DrafterKind | str | None, available: Collection[DrafterKind]) -> DrafterKind:
    """The drafter an answer uses: ``requested`` when it is available, otherwise the first
    available one in :data:`DRAFTER_PREFERENCE` (prompt lookup needs nothing, so there always is one)."""
    if requested is not None:
        kind = DrafterKind(requested)
        if kind in available or kind in DRAFT_FREE:
            return kind
    for kind in DRAFTER_PREFERENCE:
        if kind in available:
            return kind
    return DrafterKind.NGRAM


def drafter_named(word: str) -> DrafterKind | NoDrafter:
    """The drafter a stats record names: a :class:`DrafterKind`, or :data:`NO_DRAFTER`."""
    return NO_DRAFTER if word == NO_DRAFTER else DrafterKind(word)


DRAFT_K = NumberRange(  # high: the most Auto drafts of a copy per pass (llama.cpp's ngram-mod n-max)
    "draft_max", int, 1, 64, 8, "Tokens drafted per cycle: k with speculation on, the most Auto drafts with a model"
)
MAX_TOKENS = NumberRange("max_tokens", int, 1, 1 << 20, 512, "Longest answer in tokens")
TEMPERATURE = NumberRange("temperature", float, 0.0, 5.0, 0.0, "Sampling temperature; 0 is greedy")
TOP_K = NumberRange("top_k", int, 0, 1 << 20, 0, "Sample among the k likeliest tokens (0: off)")
TOP_P = NumberRange("top_p", float, 0.0, 1.0, 1.0, "Nucleus sampling mass (1: off)", low_open=True)
MIN_P = NumberRange("min_p", float, 0.0, 0.999999, 0.0, "Drop tokens below this share of the likeliest (0: off)")
_PENALTY = "Make tokens among the last few less likely (llama.cpp's repeat penalty; 1: off)"
# Below 1 the penalty favours recent tokens (llama.cpp allows it); far below, it makes them certain:
# at 1e-300 every answer was the prompt's last token over and over, or nothing. 0.1 is the floor.
REPEAT_PENALTY = NumberRange("repeat_penalty", float, 0.1, 10.0, 1.0, _PENALTY)
REPEAT_LAST_N = NumberRange("repeat_last_n", int, 0, 1 << 20, 64, "How many recent tokens the repeat penalty looks at")
SEED = NumberRange("seed", int, 0, 2**63 - 1, 42, "Sampling seed (used when temperature > 0)")
API_HOST = "127.0.0.1"  # the local API answers this machine only unless told otherwise
API_PORT = NumberRange("api_port", int, 1024, 65535, 8080, "Port of the local OpenAI-compatible API")
_BIAS = "Added to a token's logit before every other transform (OpenAI's logit_bias; -100 bans, 100 forces)"
LOGIT_BIAS = NumberRange("logit_bias", float, -100.0, 100.0, 0.0, _BIAS)


@dataclass(frozen=True)
class SamplingParams:
    """How the next token is chosen. ``temperature == 0`` means greedy (argmax)."""

    temperature: float = TEMPERATURE.default
    top_k: int = TOP_K.default
    top_p: float = TOP_P.default
    min_p: float = MIN_P.default
    seed: int | None = None
    repeat_penalty: float = REPEAT_PENALTY.default
    repeat_last_n: int = REPEAT_LAST_N.default
    logit_bias: tuple[tuple[int, float], ...] = ()  # (token id, LOGIT_BIAS) pairs, ids in increasing order

    def __post_init__(self) -> None:
        for number in (TEMPERATURE, TOP_K, TOP_P, MIN_P, REPEAT_PENALTY, REPEAT_LAST_N):  # each named as its field
            object.__setattr__(self, number.name, number.check(getattr(self, number.name)))
        if self.seed is not None:
            object.__setattr__(self, "seed", SEED.check(self.seed))
        bias = ((int(t), float(LOGIT_BIAS.check(b))) for t, b in dict(self.logit_bias).items())
        object.__setattr__(self, "logit_bias", tuple(sorted(bias)))  # the ids are checked against the vocabulary

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    @property
    def penalized(self) -> bool:
        """The repeat penalty changes scores (see :func:`desktop_app.engine.sampling.penalize`)."""
        return self.repeat_penalty != 1.0 and self.repeat_last_n > 0


@dataclass(frozen=True)
class GenerateRequest:
    """One answer to produce. Give ``messages`` (chat template applied) or ``prompt`` (raw).

    ``drafter`` None lets :func:`choose_drafter` pick; ``parse_special`` makes a raw prompt's
    special-token texts (``<|im_start|>``...) the special tokens, as llama.cpp's tools do;
    ``overflow`` says what a conversation longer than the context does.
    ``think``: the Think switch for a target that has one (:attr:`ModelInfo.has_think_switch`);
    None renders the template as its default has it. ``suffix`` (with a raw ``prompt``): fill in
    the middle between the prompt and the suffix, with the target's FIM tokens. ``tools``: the
    functions the model may call, rendered by its chat template. ``grammar``: a GBNF grammar (root
    rule ``root``) every token is drawn under, drafts included (GrammarError when llama.cpp cannot
    parse it, before any work); with ``grammar_triggers`` (regular expressions, a tool format's
    ``trigger``) it is lazy: the answer is free until one matches, then follows the grammar from there.
    ``continue_answer``: the last message is an answer to go on with (it ran out of length, was stopped):
    the prompt ends with its text in the assistant's open turn, and what follows it is the answer.
    """

    messages: Sequence[Message] | None = None
    prompt: str | None = None
    max_tokens: int = MAX_TOKENS.default
    sampling: SamplingParams = field(default_factory=SamplingParams)
    spec: SpecMode = DEFAULT_SPEC_MODE
    draft_max: int = DRAFT_K.default
    drafter: DrafterKind | None = None
    stop: Sequence[str] = ()
    parse_special: bool = True
    overflow: OverflowPolicy = DEFAULT_OVERFLOW
    think: bool | None = None
    suffix: str | None = None
    tools: Sequence[Tool] = ()
    grammar: str | None = None
    grammar_triggers: tuple[str, ...] = ()
    continue_answer: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", _member(SpecMode, self.spec, "spec"))
        object.__setattr__(self, "overflow", _member(OverflowPolicy, self.overflow, "overflow"))
        if self.tools and self.messages is None:
            raise ValueError("tools are offered in a chat (messages), not after a raw prompt")
        if self.drafter is not None:
            object.__setattr__(self, "drafter", _member(DrafterKind, self.drafter, "drafter"))
        MAX_TOKENS.check(self.max_tokens)
        DRAFT_K.check(self.draft_max)
        if (self.messages is None) == (self.prompt is None):
            raise ValueError("give either messages or a raw prompt")
        if self.suffix is not None and self.prompt is None:
            raise ValueError("a suffix fills in the middle after a raw prompt, not after messages")
        if isinstance(self.stop, str) or not all(isinstance(s, str) and s for s in self.stop):
            raise ValueError("stop must be a list of non-empty strings")
        if self.grammar is not None and (not isinstance(self.grammar, str) or not self.grammar.strip()):
            raise ValueError("grammar must be a GBNF grammar (a non-empty string with a rule named root)")
        if self.grammar_triggers and self.grammar is None:
            raise ValueError("grammar_triggers need a grammar to trigger")
        if self.continue_answer and (not self.messages or self.messages[-1]["role"] != "assistant"):
            raise ValueError("to continue an answer, the last message must be the assistant's answer")


E = TypeVar("E", SpecMode, DrafterKind, OverflowPolicy)


def _member(enum: type[E], value: object, name: str) -> E:
    if isinstance(value, str):  # every member's value is a word: nothing else is one
        try:
            return enum(value)
        except ValueError:
            pass
    choices = ", ".join(m.value for m in enum)
    raise ValueError(f"{name} must be one of {choices}, not {value!r}")


@dataclass(frozen=True)
class ModelInfo:
    """What the window and the CLI show about a loaded model."""

    path: str
    name: str
    architecture: str
    n_params: int
    quantization: str
    size_bytes: int
    n_ctx: int
    n_gpu_layers: int
    placement: str = ""  # with workers: how many layers each computer holds
    remote_devices: tuple[str, ...] = ()  # the workers' devices, one line each
    n_ctx_train: int = 0  # the context the model was trained for (0: unknown)
    kv_bytes_per_token: int = 0  # an estimate of the KV cache's bytes per context token (0: unknown)
    reasoning_format: ReasoningFormat | None = None  # the markers of its answers' reasoning (None: none)
    think_default: bool | None = None  # its template's Think switch's default (None: it has no switch)
    tool_format: ToolFormat | None = None  # its template's call syntax (GENERIC: it has none)
    projector: str = ""  # the vision projector (mmproj) file it sees images with ("": it sees none)

    @property
    def has_think_switch(self) -> bool:
        """The template turns reasoning on and off (GenerateRequest.think reaches it)."""
        return self.think_default is not None


@dataclass(frozen=True)
class LoadedModels:
    """The engine's state after a load: what is loaded and which drafters can run."""

    target: ModelInfo
    draft: ModelInfo | None = None
    draft_compatibility: str | None = None  # a summary when the draft fits the target
    draft_error: str | None = None  # why the draft given could not be used
    speculation_refusal: str | None = None  # why this target cannot speculate at all
    drafters: tuple[DrafterKind, ...] = (DrafterKind.NGRAM,)
    drafting_note: str = ""  # which drafting the pair supports, and why (model bar tooltip)
    backend: str = ""
    threads: str = ""  # the CPU threads in use and why (engine/threads.py); answers' stats update it
