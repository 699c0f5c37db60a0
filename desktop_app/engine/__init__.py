"""SpecChat's engine: llama.cpp models and speculative decoding. Never imports Qt."""

from __future__ import annotations

from desktop_app.engine.compat import DraftCompatibility, check_draft
from desktop_app.engine.default_model import default_model_path, find_default_model
from desktop_app.engine.engine import Engine, GenerateRequest, ModelInfo
from desktop_app.engine.errors import (
    ContextOverflowError,
    EngineError,
    IncompatibleDraftError,
    ModelLoadError,
    ModelNotFoundError,
    TemplateError,
)
from desktop_app.engine.events import Event, Finished, StatsUpdate, TextChunk
from desktop_app.engine.model import ModelOptions
from desktop_app.engine.sampling import SamplingParams
from desktop_app.engine.stats import GenerationStats

__all__ = [
    "ContextOverflowError", "DraftCompatibility", "Engine", "EngineError", "Event", "Finished",
    "GenerateRequest", "GenerationStats", "IncompatibleDraftError", "ModelInfo", "ModelLoadError",
    "ModelNotFoundError", "ModelOptions", "SamplingParams", "StatsUpdate", "TemplateError",
    "TextChunk", "check_draft", "default_model_path", "find_default_model",
]
