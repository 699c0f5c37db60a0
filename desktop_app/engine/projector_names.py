"""How a vision projector file (``mmproj``) is named beside its model, for the engine that finds
it and the library that downloads it (docs/vision.md).

Many repositories call their projector the same (ggml-org's ``mmproj-model-f16.gguf``), and the
models folder is flat, so a projector fetched with a model is saved under a name made from the
model's: ``mmproj-<model file stem>.gguf``. The engine looks for that name first.
"""

from __future__ import annotations

from pathlib import Path

PROJECTOR_NAME = "mmproj"  # what a projector file's name contains (mmproj-F16.gguf, model-mmproj-f16.gguf)


def paired_projector_name(model_name: str) -> str:
    """The name a model's own projector has beside it: ``mmproj-<model file stem>.gguf``."""
    return f"{PROJECTOR_NAME}-{Path(model_name).stem}.gguf"


def paired_projector(model_path: Path) -> Path:
    """Where the model's own projector sits (it may not exist)."""
    return model_path.with_name(paired_projector_name(model_path.name))
