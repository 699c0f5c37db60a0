"""What the generating endpoints accept at a body's top level, and the sampling they share,
declared once.

One rule on every endpoint (``/v1/chat/completions``, ``/v1/completions``, ``/v1/responses``,
``/v1/messages`` and its count, ``/infill``):

- a field the endpoint's protocol declares (the current OpenAI and Anthropic SDKs' request types,
  llama-server's fields that llama.cpp front ends send, the fields well-known clients add such as
  Codex's ``client_metadata``) is accepted: **used** where the engine can do what it asks,
  **ignored** where it means nothing for one local model (storage, caching hints, service tiers,
  labels), or accepted at its **neutral** value only, where any other value would change the
  answer in a way the engine does not (a 400 naming the field then, never a silent difference);
- a field nobody declares is a 400 naming it: a typo (``max_token``) is not silently dropped;
- a known field of the wrong type is a 400 naming it, with the same message everywhere
  (:data:`~desktop_app.server.body_types.SHARED_TYPES`);
- llama.cpp's sampling fields are taken on every endpoint, with the same defaults as the engine's
  (:mod:`desktop_app.engine.api`); ``temperature`` defaults to 1 on the OpenAI and Anthropic
  endpoints (as their providers') and to 0 on ``/infill`` (an editor's completion).

docs/api.md lists these sets; a test reads them from here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from desktop_app.engine.api import (
    MAX_TOKENS,
    REPEAT_LAST_N,
    REPEAT_PENALTY,
    TOP_K,
    TOP_P,
    SamplingParams,
    SpecMode,
)
from desktop_app.server.errors import BadRequest
from desktop_app.server.request_body import shown

MAX_STOP_STRINGS = 4
# llama.cpp's sampling fields the engine implements: used on every generating endpoint.
SAMPLING = frozenset({"temperature", "top_p", "top_k", "min_p", "repeat_penalty", "repeat_last_n", "seed"})
# Accepted only at the value that changes nothing; any other value is refused by name.
NEUTRAL: dict[str, object] = {
    "n": 1,  # OpenAI's: one answer per request
    "best_of": 1,
    "logprobs": False,  # log-probabilities are not reported
    "top_logprobs": 0,
    "echo": False,
    "frequency_penalty": 0,  # OpenAI's penalties (llama.cpp's repeat_penalty is used)
    "presence_penalty": 0,
    "background": False,  # the Responses API's: answered now, nothing kept to poll
    "typical_p": 1,  # llama.cpp's samplers the engine does not have
    "dynatemp_range": 0,
    "mirostat": 0,
    "dry_multiplier": 0,
    "xtc_probability": 0,
    "top_n_sigma": -1,
    "n_probs": 0,
    "ignore_eos": False,
}
LLAMA_NEUTRAL = frozenset({"typical_p", "dynatemp_range", "mirostat", "dry_multiplier", "xtc_probability"}) | {
    "top_n_sigma",
    "n_probs",
    "ignore_eos",
}
# llama-server's knobs for how it works rather than what it answers, and the settings of its
# samplers that only act when a neutral field above is not neutral: ignored.
LLAMA_IGNORED = frozenset(
    {"cache_prompt", "samplers", "t_max_prompt_ms", "t_max_predict_ms", "id_slot", "timings_per_token"}
    | {"return_tokens", "return_progress", "post_sampling_probs", "n_keep", "min_keep", "dynatemp_exponent"}
    | {"mirostat_tau", "mirostat_eta", "dry_base", "dry_allowed_length", "dry_penalty_last_n"}
    | {"dry_sequence_breakers", "xtc_threshold", "reasoning_format"}
)
# OpenAI's fields for its platform (storage, caching, tiers, moderation, labels): ignored.
OPENAI_IGNORED = frozenset(
    {"store", "metadata", "user", "service_tier", "safety_identifier", "prompt_cache_key", "moderation"}
    | {"prompt_cache_retention", "prompt_cache_options"}
)
# Chat Completions': audio and search the model cannot do, a hint it does not need.
CHAT_IGNORED = OPENAI_IGNORED | {"modalities", "audio", "verbosity", "prediction", "web_search_options"}
RESPONSES_IGNORED = OPENAI_IGNORED | {
    "truncation",
    "include",
    "max_tool_calls",
    "stream_options",  # include_obfuscation only
    "context_management",
    "image",
    "access_programs",
    "background_options",
    "client_metadata",  # Codex's
}
# Anthropic's platform fields and headers as body fields: meaningless for one local model.
ANTHROPIC_IGNORED = frozenset(
    {"cache_control", "context_management", "service_tier", "container", "diagnostics", "inference_geo"}
    | {"speed", "user_profile_id", "workspace_id", "betas", "anthropic_beta", "anthropic_version"}
    | {"billing_policy", "compaction", "fallback_credit_token", "fallbacks", "mcp_servers", "thread"}
)


@dataclass(frozen=True)
class Accepted:
    """One endpoint's top-level fields: ``used`` by its parser, accepted at their ``neutral``
    value, ``ignored``, and ``refused`` with a reason (known fields it cannot serve)."""

    used: frozenset[str]
    ignored: frozenset[str] = frozenset()
    neutral: frozenset[str] = frozenset()
    refused: Mapping[str, str] = field(default_factory=dict)

    @property
    def known(self) -> frozenset[str]:
        return self.used | self.ignored | self.neutral | frozenset(self.refused)

    def check(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The body without its null, ignored and neutral fields (``null`` means absent);
        BadRequest naming a field that is unknown, refused, or not at its neutral value."""
        kept: dict[str, Any] = {}
        for name, value in body.items():
            if value is None or name in self.ignored:
                continue
            if name in self.refused:
                raise BadRequest(f"'{name}' {self.refused[name]}", name)
            if name in self.neutral:
                if value != NEUTRAL[name]:  # its type is checked first (SHARED_TYPES)
                    raise BadRequest(f"'{name}' is not supported (only {json.dumps(NEUTRAL[name])})", name)
                continue
            if name not in self.used:
                raise BadRequest(
                    f"unknown field '{name}' (this endpoint uses {', '.join(sorted(self.used))}; "
                    "the standard fields it accepts and ignores are listed in docs/api.md)",
                    name,
                )
            kept[name] = value
        return kept


def accepted(used: Iterable[str], ignored: Iterable[str] = (), neutral: Iterable[str] = (), **refused: str) -> Accepted:
    """An endpoint's fields: its own ``used`` ones plus llama.cpp's sampling, on every endpoint."""
    return Accepted(
        frozenset(used) | SAMPLING,
        frozenset(ignored) | LLAMA_IGNORED,
        frozenset(neutral) | LLAMA_NEUTRAL,
        refused,
    )


def sampling(
    body: Mapping[str, Any], temperature: float = 1.0, logit_bias: tuple[tuple[int, float], ...] = ()
) -> SamplingParams:
    """The sampling a body asks for (its types already checked), each number in the engine's
    range; BadRequest naming the field otherwise. ``seed`` -1 is llama.cpp's "random": no seed."""
    seed = body.get("seed")
    try:
        return SamplingParams(
            temperature=body.get("temperature", temperature),
            top_k=body.get("top_k", TOP_K.default),
            top_p=body.get("top_p", TOP_P.default),
            min_p=body.get("min_p", 0.0),
            seed=None if seed == -1 else seed,
            repeat_penalty=body.get("repeat_penalty", REPEAT_PENALTY.default),
            repeat_last_n=body.get("repeat_last_n", REPEAT_LAST_N.default),
            logit_bias=logit_bias,
        )
    except ValueError as exc:
        name = str(exc).split(" ", 1)[0]
        raise BadRequest(str(exc), name if name in SAMPLING else None) from None


def stop_strings(body: Mapping[str, Any], name: str) -> list[str]:
    """The strings that end the answer (OpenAI's and llama.cpp's ``stop``: one string or a list)."""
    value = body.get(name, [])
    value = [value] if isinstance(value, str) else value
    if not isinstance(value, list) or len(value) > MAX_STOP_STRINGS or not all(isinstance(s, str) and s for s in value):
        raise BadRequest(f"'{name}' must be a string or up to {MAX_STOP_STRINGS} non-empty strings", name)
    return value


def answer_length(body: Mapping[str, Any], names: Iterable[str], default: int = MAX_TOKENS.high) -> int:
    """The longest answer the first of ``names`` present asks for (``n_predict`` -1, llama.cpp's
    "no limit", and an absent one: ``default``); BadRequest naming the field when out of range."""
    for name in names:
        if name in body:
            value = body[name]
            if name == "n_predict" and value == -1:
                return default
            try:
                return int(MAX_TOKENS.check(value))
            except ValueError as exc:
                raise BadRequest(name + str(exc).removeprefix(MAX_TOKENS.name), name) from None
    return default


def spec_mode(body: Mapping[str, Any], default: SpecMode) -> SpecMode:
    """Our ``speculation`` field: off, on or auto for this request (``default``: the server's)."""
    value = body.get("speculation", default.value)
    try:
        return SpecMode(value)
    except ValueError:
        choices = ", ".join(m.value for m in SpecMode)
        raise BadRequest(f"speculation must be one of {choices}, not {shown(value)}", "speculation") from None
