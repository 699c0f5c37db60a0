"""Tiny Gemma 4 target + Gemma 4 assistant (MTP drafter) GGUF pair for tests, built in seconds.

llama.cpp (vendored in llama-cpp-python 0.3.36) runs a ``gemma4-assistant`` model only as a
drafter attached to a ``gemma4`` target context: the assistant context is created with
``ctx_type = LLAMA_CONTEXT_TYPE_MTP`` and ``ctx_other = <target context>``, has no K/V of its own
(its attention layers read the target's KV cache of the target's last SWA and last full layer),
embeds its input token with the TARGET's ``token_embd`` and takes the target's post-norm hidden
state (``llama_get_embeddings_nextn_ith``) as a second input row.

Both files carry the SmolLM2 tokenizer and chat template of the embedded default model (the
architecture does not constrain the tokenizer), so the two vocabularies are identical.

Shapes (llama.cpp's ``src/models/gemma4.cpp`` / ``gemma4-assistant.cpp`` loaders):

- target ``gemma4``: width 64, 6 layers, sliding-window pattern S F S F S F (the last layer
  must be full attention and the one before it SWA: the assistant shares exactly those two),
  the last 2 layers reuse the KV of layers 2/3 (``shared_kv_layers``, as real Gemma 4 E2B/E4B do),
  head dim 16 on SWA layers and 32 on full layers, ``final_logit_softcapping`` 30, no per-layer
  embeddings (``embedding_length_per_layer_input`` = 0).
- assistant ``gemma4-assistant``: width 96 (must differ from the target's), ``embedding_length_out``
  64 (= target width), 2 layers, all of them NextN layers (``nextn_predict_layers`` =
  ``block_count``), pattern S F, Q-only attention, tied output head.

Agreement: the target's residual stream is dominated by its (scaled) input-token embedding, each
block adding a normalised contribution of RMS ``ALPHA`` (its post-norm weights), so its greedy
choice is usually the "bigram" argmax ``output . E[token]``. The assistant's pre-projection is an
identity that keeps ``sqrt(64) * E_target[token]`` in its first 64 channels, its blocks add small
contributions, and its tied output matrix is the target's ``output`` padded with zero columns:
it predicts that bigram, so it agrees with the target on most positions but not all.

2-D weights are quantized (Q8_0; the output heads Q4_0, padded identically so the assistant's
head rows are bit-for-bit the target's): quantized CPU matmuls are bit-identical across batch
sizes, which greedy-identity tests rely on (see tests/model_factory.py).
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

from desktop_app.engine.llama.default_model import default_model_path
from tests.model_factory import CONTEXT, Tokenizer, _write_tokenizer, read_tokenizer

TARGET_ARCH = "gemma4"
ASSISTANT_ARCH = "gemma4-assistant"

N_EMBD = 64  # target width
N_LAYER = 6
SWA_PATTERN = [True, False, True, False, True, False]  # last full, second-to-last SWA
SHARED_KV_LAYERS = 2
N_HEAD = 4
N_HEAD_KV = 2
HEAD_DIM_SWA = 16
HEAD_DIM_FULL = 32
N_FF = 192
SLIDING_WINDOW = 512
ROPE_BASE = 1_000_000.0
ROPE_BASE_SWA = 10_000.0
RMS_EPS = 1e-6
SOFTCAP = 30.0
ALPHA = 0.1  # RMS of each target block's contribution (post-norm weights); 8 is the token signal

A_EMBD = 96  # assistant width
A_LAYERS = 2
A_SWA_PATTERN = [True, False]
A_FF = 192
A_BETA = 0.1  # RMS of each assistant block's contribution

SEED = 4242

Q8 = gguf.GGMLQuantizationType.Q8_0
Q4 = gguf.GGMLQuantizationType.Q4_0


def _head_dim(is_swa: bool) -> int:
    return HEAD_DIM_SWA if is_swa else HEAD_DIM_FULL


def _rope_freqs() -> np.ndarray:
    # "proportional" RoPE of full-attention layers, as the converter writes it: a quarter of the
    # pairs rotate, the rest get a huge frequency divisor (no rotation).
    n_pairs = HEAD_DIM_FULL // 2
    n_rot = n_pairs // 4
    return np.array([1.0] * n_rot + [1e30] * (n_pairs - n_rot), dtype=np.float32)


def _common_keys(w: gguf.GGUFWriter, width: int, n_layer: int, n_ff: int, pattern: list[bool]) -> None:
    w.add_context_length(CONTEXT)
    w.add_embedding_length(width)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD_KV)
    w.add_key_length(HEAD_DIM_FULL)
    w.add_value_length(HEAD_DIM_FULL)
    w.add_key_length_swa(HEAD_DIM_SWA)
    w.add_value_length_swa(HEAD_DIM_SWA)
    w.add_rope_dimension_count(HEAD_DIM_FULL)
    w.add_rope_dimension_count_swa(HEAD_DIM_SWA)
    w.add_rope_freq_base(ROPE_BASE)
    w.add_rope_freq_base_swa(ROPE_BASE_SWA)
    w.add_layer_norm_rms_eps(RMS_EPS)
    w.add_sliding_window(SLIDING_WINDOW)
    w.add_sliding_window_pattern(pattern)


def _add(w: gguf.GGUFWriter, name: str, array: np.ndarray, qtype: gguf.GGMLQuantizationType | None = None) -> None:
    array = np.ascontiguousarray(array, dtype=np.float32)
    if array.ndim == 2:
        qtype = qtype or Q8
        w.add_tensor(name, gguf.quants.quantize(array, qtype), raw_dtype=qtype)
    else:
        w.add_tensor(name, array)


def _finish(w: gguf.GGUFWriter) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def _mat(rng: np.random.Generator, rows: int, cols: int, gain: float = 1.0) -> np.ndarray:
    return rng.normal(0.0, gain / np.sqrt(cols), (rows, cols)).astype(np.float32)


def _target_weights(n_vocab: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(SEED)
    d = N_EMBD
    out: dict[str, np.ndarray] = {
        "token_embd.weight": rng.normal(0.0, 1.0, (n_vocab, d)).astype(np.float32),
        "output.weight": rng.normal(0.0, 1.0, (n_vocab, d)).astype(np.float32),
        "output_norm.weight": np.ones(d, np.float32),
        "rope_freqs.weight": _rope_freqs(),
    }
    n_kv_layers = N_LAYER - SHARED_KV_LAYERS
    for i, is_swa in enumerate(SWA_PATTERN):
        lr = np.random.default_rng([SEED, i])
        hd = _head_dim(is_swa)
        p = f"blk.{i}."
        out[p + "attn_norm.weight"] = np.ones(d, np.float32)
        out[p + "attn_q.weight"] = _mat(lr, N_HEAD * hd, d, 2.0)
        out[p + "attn_q_norm.weight"] = np.ones(hd, np.float32)
        if i < n_kv_layers:
            out[p + "attn_k.weight"] = _mat(lr, N_HEAD_KV * hd, d, 2.0)
            out[p + "attn_v.weight"] = _mat(lr, N_HEAD_KV * hd, d)
            out[p + "attn_k_norm.weight"] = np.ones(hd, np.float32)
        out[p + "attn_output.weight"] = _mat(lr, d, N_HEAD * hd)
        out[p + "post_attention_norm.weight"] = np.full(d, ALPHA, np.float32)
        out[p + "ffn_norm.weight"] = np.ones(d, np.float32)
        out[p + "ffn_gate.weight"] = _mat(lr, N_FF, d)
        out[p + "ffn_up.weight"] = _mat(lr, N_FF, d)
        out[p + "ffn_down.weight"] = _mat(lr, d, N_FF)
        out[p + "post_ffw_norm.weight"] = np.full(d, ALPHA, np.float32)
        out[p + "layer_output_scale.weight"] = np.ones(1, np.float32)
    return out


def _assistant_weights(target: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    rng = np.random.default_rng([SEED, 999])
    a, d = A_EMBD, N_EMBD
    n_vocab = target["output.weight"].shape[0]
    head = np.zeros((n_vocab, a), np.float32)
    head[:, :d] = target["output.weight"]  # whole Q4_0 blocks: quantizes exactly like the target's
    pre = np.zeros((a, 2 * d), np.float32)  # [x_token(64) | h_target(64)] -> width 96
    pre[:d, :d] = np.eye(d)
    pre[d:, d : d + (a - d)] = np.eye(a - d)
    post = np.zeros((d, a), np.float32)  # width 96 -> target width 64 (h for the next draft step)
    post[:, :d] = np.eye(d)
    out: dict[str, np.ndarray] = {
        "token_embd.weight": head,
        "output_norm.weight": np.ones(a, np.float32),
        "nextn.pre_projection.weight": pre,
        "nextn.post_projection.weight": post,
        "rope_freqs.weight": _rope_freqs(),
    }
    for i, is_swa in enumerate(A_SWA_PATTERN):
        hd = _head_dim(is_swa)
        p = f"blk.{i}."
        out[p + "attn_norm.weight"] = np.ones(a, np.float32)
        out[p + "attn_q.weight"] = _mat(rng, N_HEAD * hd, a, 2.0)
        out[p + "attn_q_norm.weight"] = np.ones(hd, np.float32)
        out[p + "attn_output.weight"] = _mat(rng, a, N_HEAD * hd)
        out[p + "post_attention_norm.weight"] = np.full(a, A_BETA, np.float32)
        out[p + "ffn_norm.weight"] = np.ones(a, np.float32)
        out[p + "ffn_gate.weight"] = _mat(rng, A_FF, a)
        out[p + "ffn_up.weight"] = _mat(rng, A_FF, a)
        out[p + "ffn_down.weight"] = _mat(rng, a, A_FF)
        out[p + "post_ffw_norm.weight"] = np.full(a, A_BETA, np.float32)
        out[p + "layer_output_scale.weight"] = np.ones(1, np.float32)
    return out


_QUANT = {"token_embd.weight": Q8, "output.weight": Q4}


def write_gemma4_target(path: Path, tokenizer: Tokenizer, weights: dict[str, np.ndarray]) -> Path:
    w = gguf.GGUFWriter(str(path), TARGET_ARCH)
    w.add_name("specchat-test-gemma4-target")
    _common_keys(w, N_EMBD, N_LAYER, N_FF, SWA_PATTERN)
    w.add_shared_kv_layers(SHARED_KV_LAYERS)
    w.add_embedding_length_per_layer_input(0)  # required key; 0 = no per-layer embeddings
    w.add_final_logit_softcapping(SOFTCAP)
    w.add_vocab_size(len(tokenizer.tokens))
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    _write_tokenizer(w, tokenizer)
    for name, array in weights.items():
        _add(w, name, array, _QUANT.get(name))
    _finish(w)
    return path


def write_gemma4_assistant(path: Path, tokenizer: Tokenizer, weights: dict[str, np.ndarray]) -> Path:
    w = gguf.GGUFWriter(str(path), ASSISTANT_ARCH)
    w.add_name("specchat-test-gemma4-assistant")
    _common_keys(w, A_EMBD, A_LAYERS, A_FF, A_SWA_PATTERN)
    w.add_embedding_length_out(N_EMBD)  # the target's hidden size: the h rows exchanged
    w.add_nextn_predict_layers(A_LAYERS)  # every block is a NextN block (no trunk)
    w.add_vocab_size(len(tokenizer.tokens))
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    _write_tokenizer(w, tokenizer)
    for name, array in weights.items():
        _add(w, name, array, Q4 if name == "token_embd.weight" else None)
    _finish(w)
    return path


def build_gemma4_pair(directory: Path) -> tuple[Path, Path]:
    """Write (target, assistant) into ``directory``; existing files are reused."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "gemma4-target.gguf"
    assistant = directory / "gemma4-assistant.gguf"
    if target.exists() and assistant.exists():
        return target, assistant
    tokenizer = read_tokenizer(default_model_path())
    weights = _target_weights(len(tokenizer.tokens))
    write_gemma4_target(target, tokenizer, weights)
    write_gemma4_assistant(assistant, tokenizer, _assistant_weights(weights))
    return target, assistant


if __name__ == "__main__":
    import sys
    import time

    start = time.perf_counter()
    paths = build_gemma4_pair(Path(sys.argv[1] if len(sys.argv) > 1 else "build/test-models"))
    print(f"built in {time.perf_counter() - start:.2f}s")
    for p in paths:
        print(f"{p.stat().st_size / 1e6:7.2f} MB  {p}")
