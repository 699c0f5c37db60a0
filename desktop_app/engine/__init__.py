"""SpecChat's engine: llama.cpp models and speculative decoding. Never imports Qt.

Names are imported lazily: ``from desktop_app.engine.api import GenerateRequest`` (or any other
llama-free type) does not load llama.cpp; ``desktop_app.engine.Engine`` does, on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Engine": "engine",
    "check_draft": "compat",
    "DraftCompatibility": "compat",
    "default_model_path": "default_model",
    "find_default_model": "default_model",
    "ContextOverflowError": "errors",
    "EngineError": "errors",
    "IncompatibleDraftError": "errors",
    "ModelLoadError": "errors",
    "ModelNotFoundError": "errors",
    "TemplateError": "errors",
    "DrafterKind": "api",
    "Event": "api",
    "Finished": "api",
    "GenerateRequest": "api",
    "GenerationStats": "api",
    "LoadedModels": "api",
    "ModelInfo": "api",
    "ModelOptions": "api",
    "SamplingParams": "api",
    "SpecMode": "api",
    "StatsUpdate": "api",
    "TextChunk": "api",
    "final_result": "api",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from desktop_app.engine.api import (
        DrafterKind, Event, Finished, GenerateRequest, GenerationStats, LoadedModels, ModelInfo, ModelOptions,
        SamplingParams, SpecMode, StatsUpdate, TextChunk, final_result,
    )
    from desktop_app.engine.compat import DraftCompatibility, check_draft
    from desktop_app.engine.default_model import default_model_path, find_default_model
    from desktop_app.engine.engine import Engine
    from desktop_app.engine.errors import (
        ContextOverflowError, EngineError, IncompatibleDraftError, ModelLoadError, ModelNotFoundError, TemplateError,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'desktop_app.engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"desktop_app.engine.{module}"), name)
    globals()[name] = value
    return value
