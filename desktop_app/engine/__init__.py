"""SpecChat's engine: llama.cpp models and speculative decoding. Never imports Qt.

Names are imported lazily: ``from desktop_app.engine.api import GenerateRequest`` (or any other
llama-free type) does not load llama.cpp; ``desktop_app.engine.Engine`` does, on first use.

The rest of the app reaches the engine through this face and its top-level modules (``api``,
``errors``, ``events``, ...), never through the sub-packages ``llama``, ``drafters``, ``auto``
or ``loop`` (a contract in pyproject.toml). A name may differ from the one it has in its
module: ``"module:name"`` in ``_EXPORTS`` (``grammar_parse_problem`` is ``llama.grammar``'s
``parse_problem``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Engine": "loop.engine",
    "check_draft": "llama.compat",
    "DraftCompatibility": "llama.compat",
    "DraftingSupport": "llama.drafting",
    "has_mtp_layers": "llama.drafting",
    "is_assistant": "llama.drafting",
    "read_gguf": "llama.gguf_file",
    "BackendInfo": "llama.backend",
    "backend_info": "llama.backend",
    "ensure_backend": "llama.backend",
    "VocabOnlyModel": "llama.vocab_only",
    "PairCheck": "llama.vocab_only",
    "check_pair": "llama.vocab_only",
    "check_pairs": "llama.vocab_only",
    "default_model_path": "llama.default_model",
    "find_default_model": "llama.default_model",
    "on_fatal": "llama.rpc",
    "require_rpc": "llama.rpc",
    "grammar_parse_problem": "llama.grammar:parse_problem",
    "ContextOverflowError": "errors",
    "EngineError": "errors",
    "IncompatibleDraftError": "errors",
    "ModelLoadError": "errors",
    "ModelNotFoundError": "errors",
    "GrammarError": "errors",
    "TemplateError": "errors",
    "DrafterKind": "api",
    "Event": "events",
    "Finished": "events",
    "GenerateRequest": "api",
    "GenerationStats": "stats",
    "LoadedModels": "api",
    "ModelInfo": "api",
    "ModelOptions": "api",
    "SamplingParams": "api",
    "SpecMode": "api",
    "StatsUpdate": "events",
    "TextChunk": "events",
    "ThreadMemory": "llama.thread_memory",
    "CostMemory": "auto.cost_memory",
    "ModelSpeeds": "model_speeds",
    "final_result": "events",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from desktop_app.engine.api import (
        DrafterKind,
        GenerateRequest,
        LoadedModels,
        ModelInfo,
        ModelOptions,
        SamplingParams,
        SpecMode,
    )
    from desktop_app.engine.auto.cost_memory import CostMemory
    from desktop_app.engine.errors import (
        ContextOverflowError,
        EngineError,
        GrammarError,
        IncompatibleDraftError,
        ModelLoadError,
        ModelNotFoundError,
        TemplateError,
    )
    from desktop_app.engine.events import Event, Finished, StatsUpdate, TextChunk, final_result
    from desktop_app.engine.llama.backend import BackendInfo, backend_info, ensure_backend
    from desktop_app.engine.llama.compat import DraftCompatibility, check_draft
    from desktop_app.engine.llama.default_model import default_model_path, find_default_model
    from desktop_app.engine.llama.drafting import DraftingSupport, has_mtp_layers, is_assistant
    from desktop_app.engine.llama.gguf_file import read_gguf
    from desktop_app.engine.llama.grammar import parse_problem as grammar_parse_problem
    from desktop_app.engine.llama.rpc import on_fatal, require_rpc
    from desktop_app.engine.llama.thread_memory import ThreadMemory
    from desktop_app.engine.llama.vocab_only import PairCheck, VocabOnlyModel, check_pair, check_pairs
    from desktop_app.engine.loop.engine import Engine
    from desktop_app.engine.model_speeds import ModelSpeeds
    from desktop_app.engine.stats import GenerationStats


def __getattr__(name: str) -> Any:
    where = _EXPORTS.get(name)
    if where is None:
        raise AttributeError(f"module 'desktop_app.engine' has no attribute {name!r}")
    module, _, attribute = where.partition(":")
    value = getattr(importlib.import_module(f"desktop_app.engine.{module}"), attribute or name)
    globals()[name] = value
    return value
