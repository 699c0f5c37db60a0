"""Tiny vision model for tests: a llama text model and its projector file (``mmproj``), built in
well under a second, that llama.cpp's multimodal library (``mtmd``) loads and runs for real.

- ``vision-target.gguf``: the factory ``target`` (tests/model_factory.py: same seed, shapes,
  tokenizer and chat template), so the factory ``draft`` pairs with it as a text draft model.
- ``mmproj-vision-target.gguf``: a LLaVA-style projector (clip.cpp's ``mlp`` projector type,
  the simplest it runs): a CLIP ViT (``VIT_LAYERS`` layers of width ``VIT_EMBD``) over
  ``IMAGE_SIZE`` px images cut into ``PATCH_SIZE`` px patches, whose per-patch features a
  2-layer MLP (``mm.0``, GELU, ``mm.2``) projects to the text model's width. An image is resized
  to ``IMAGE_SIZE`` square and becomes ``IMAGE_TOKENS`` embeddings, one position each (no M-RoPE).

The projector's weights are random (seeded) and scaled so that its embeddings are of the size of
the text model's token embeddings: two different images steer the answer differently.
:func:`write_mmproj` also writes projectors of another output width (one that does not fit).

Everything is F32 except the text model (quantized as the factory's): encoding an image costs
milliseconds on a CPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gguf
import numpy as np

from desktop_app.engine.llama.default_model import default_model_path
from tests.model_factory import N_EMBD, TARGET_LAYERS, ModelSpec, read_tokenizer, write_model

IMAGE_SIZE = 32
PATCH_SIZE = 8
IMAGE_TOKENS = (IMAGE_SIZE // PATCH_SIZE) ** 2  # 16 embeddings per image
VIT_EMBD = 32
VIT_HEADS = 2
VIT_FF = 64
VIT_LAYERS = 2  # LLaVA reads the second-to-last layer: one block runs
MM_HIDDEN = 64
SEED = 777


@dataclass(frozen=True)
class VisionModel:
    """The text model and its projector, side by side in one folder (as a user keeps them)."""

    model: Path
    mmproj: Path


def _mat(rng: np.random.Generator, rows: int, cols: int, gain: float = 1.0) -> np.ndarray:
    return rng.normal(0.0, gain / np.sqrt(cols), (rows, cols)).astype(np.float32)


def _projector_weights(n_embd_out: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    d = VIT_EMBD
    n_pos = IMAGE_TOKENS
    out: dict[str, np.ndarray] = {
        # PyTorch layouts (gguf reverses them into ggml's): conv kernel (out, in, kh, kw)
        "v.patch_embd.weight": rng.normal(0.0, 1.0 / np.sqrt(3 * PATCH_SIZE**2), (d, 3, PATCH_SIZE, PATCH_SIZE)).astype(
            np.float32
        ),
        "v.patch_embd.bias": np.zeros(d, np.float32),
        "v.position_embd.weight": rng.normal(0.0, 0.1, (n_pos, d)).astype(np.float32),
        "v.pre_ln.weight": np.ones(d, np.float32),
        "v.pre_ln.bias": np.zeros(d, np.float32),
        "mm.0.weight": _mat(rng, MM_HIDDEN, d, 2.0),
        "mm.0.bias": np.zeros(MM_HIDDEN, np.float32),
        # GELU halves the variance: gain 2 keeps the output near unit RMS, like a token embedding
        "mm.2.weight": _mat(rng, n_embd_out, MM_HIDDEN, 2.0),
        "mm.2.bias": np.zeros(n_embd_out, np.float32),
    }
    for i in range(VIT_LAYERS):
        p = f"v.blk.{i}."
        for norm in ("ln1", "ln2"):
            out[p + norm + ".weight"] = np.ones(d, np.float32)
            out[p + norm + ".bias"] = np.zeros(d, np.float32)
        for name in ("attn_q", "attn_k", "attn_v", "attn_out"):
            out[p + name + ".weight"] = _mat(rng, d, d)
            out[p + name + ".bias"] = np.zeros(d, np.float32)
        out[p + "ffn_up.weight"] = _mat(rng, VIT_FF, d)
        out[p + "ffn_up.bias"] = np.zeros(VIT_FF, np.float32)
        out[p + "ffn_down.weight"] = _mat(rng, d, VIT_FF)
        out[p + "ffn_down.bias"] = np.zeros(d, np.float32)
    return out


def write_mmproj(path: Path, n_embd_out: int = N_EMBD, seed: int = SEED, tiles: bool = False) -> Path:
    """Write a projector whose embeddings are ``n_embd_out`` wide (the text model's width fits).
    With ``tiles``, LLaVA-1.6's way: an image is read as an overview and tiles of ``IMAGE_SIZE``
    (a grid of up to 2 x 2), ``IMAGE_TOKENS`` embeddings each, several image chunks in mtmd."""
    w = gguf.GGUFWriter(str(path), "clip")
    w.add_name("specchat-test-mmproj")
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_bool("clip.has_vision_encoder", True)
    w.add_bool("clip.use_gelu", True)
    w.add_string("clip.projector_type", "mlp")
    w.add_uint32("clip.vision.image_size", IMAGE_SIZE)
    w.add_uint32("clip.vision.patch_size", PATCH_SIZE)
    w.add_uint32("clip.vision.embedding_length", VIT_EMBD)
    w.add_uint32("clip.vision.feed_forward_length", VIT_FF)
    w.add_uint32("clip.vision.projection_dim", n_embd_out)
    w.add_uint32("clip.vision.attention.head_count", VIT_HEADS)
    w.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-6)
    w.add_uint32("clip.vision.block_count", VIT_LAYERS)
    w.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    w.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])
    weights = _projector_weights(n_embd_out, seed)
    if tiles:
        side = 2 * IMAGE_SIZE
        w.add_array("clip.vision.image_grid_pinpoints", [IMAGE_SIZE, side, side, IMAGE_SIZE, side, side])
        w.add_string("clip.vision.mm_patch_merge_type", "spatial_unpad")
        weights["v.image_newline"] = np.zeros(n_embd_out, np.float32)
    for name, array in weights.items():
        w.add_tensor(name, np.ascontiguousarray(array, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def build_vision_model(directory: Path) -> VisionModel:
    """Write the text model and its projector into ``directory``; existing files are reused."""
    directory.mkdir(parents=True, exist_ok=True)
    out = VisionModel(directory / "vision-target.gguf", directory / "mmproj-vision-target.gguf")
    if out.model.exists() and out.mmproj.exists():
        return out
    write_model(out.model, ModelSpec("target", TARGET_LAYERS), read_tokenizer(default_model_path()))
    write_mmproj(out.mmproj)
    return out


if __name__ == "__main__":
    import sys
    import time

    start = time.perf_counter()
    built = build_vision_model(Path(sys.argv[1] if len(sys.argv) > 1 else "build/test-models/vision"))
    print(f"built in {time.perf_counter() - start:.2f}s")
    for p in (built.model, built.mmproj):
        print(f"{p.stat().st_size / 1e6:7.2f} MB  {p}")
