"""Tiny hybrid (recurrent + attention) GGUF test models for MTP and rollback tests.

Every model here shares the default model's SmolLM2 tokenizer (see ``tests/model_factory.py``),
so a normal llama draft from that factory is a same-vocabulary draft for these targets too.

- ``hybrid-mtp.gguf``: a **qwen35** target (3 gated-delta-net recurrent layers, 1 full-attention
  layer) with one built-in MTP ("nextn") block. qwen35 supports recurrent-state rollback
  (``llama_context_params.n_rs_seq``) and llama.cpp's ``draft-mtp`` speculative method.
- ``hybrid.gguf``: the same trunk, bit for bit, without the MTP block.
- ``hybrid-draft.gguf``: the same trunk with its attention scaled down, a qwen35 draft model.

The mamba target that cannot roll back is in ``tests/factory_mamba.py``; ``tests/factory_recurrent.py``
builds them all.

How the MTP block is made to agree with its target (random weights alone would agree on ~0%):

* Dimension 63 of every token embedding is the constant 1 (the other 63 are random, scaled so
  each row has RMS 1); it acts as a bias for the recurrent layer's gates.
* Layer 0 is a "previous-token" gated delta net: its keys and queries are one constant unit
  vector and beta is 1, so the delta rule overwrites the memory each step and outputs
  ``v_t / sqrt(d)``; the conv kernel taps the *previous* token for the v channels, whose large
  constant offset keeps SiLU nearly linear. With an output projection that cancels per-head
  constants, layer 0 adds ``G(x_{t-1}) ~ A * E[x_{t-1}]`` to the residual stream (RMS about
  ``PREV_GAIN`` of the embedding): the next token depends on the last two tokens.
* Layers 1-2 are random gated delta nets scaled by ``TAIL_SCALE`` (small perturbations);
  layer 3 is a random full-attention + FFN block at ``ATTN_SCALE`` (context dependence).
* The MTP block predicts token t+2 from (h_t, x_{t+1}): ``eh_proj = [I | B]`` rebuilds the
  target's layer-0 residual at t+1, ``E[x_{t+1}] + G(x_t)``, where ``B`` is a least-squares fit
  of ``G(x_t)`` from the hidden state ``h_t`` (so the hidden-state hand-off matters: with a
  zero or misaligned h the agreement drops); its attention/FFN copy layer 3's weights, so it
  also needs a correct MTP KV cache.

Measured (llama-cpp-python 0.3.36, CPU, 5 prompts x 100-200 greedy tokens): the head's first
draft matches the target's next token 72% of the time teacher-forced with the right h (38% with
h = 0, 25% with h one position late); in a draft/verify loop each chained draft step is accepted
70-79% of the time given the previous one was (overall accepted/drafted: k=1 72%, k=2 67%,
k=3 56%, k=4 50%; 1.7 / 2.3 / 2.7 / 3.0 tokens per target decode), output token-identical
to plain greedy decoding.

2-D matmul weights are quantized (Q8_0, output Q4_0), as in ``tests/model_factory.py``: the
quantized CPU kernels give bit-identical rows for batched and single-token decodes, which the
greedy identity tests need. (The gated delta net CPU op runs token by token in both cases.)
Measured: logits are bit-identical for batches of up to 48 rows; from 64 rows on they differ
(for tests/model_factory.py's llama models too), so identity tests must decode verify batches
and prompts the same way in both paths, or keep batches small.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

from desktop_app.engine.llama.default_model import default_model_path
from tests.model_factory import Tokenizer, _write_tokenizer, read_tokenizer

N_EMBD = 64
N_HEAD = 4
N_HEAD_KV = 2
HEAD_DIM = 16
N_FF = 192
N_TRUNK = 4  # layers 0-2 recurrent, layer 3 full attention (full_attention_interval = 4)
SSM_D_STATE = 16  # head_k_dim == head_v_dim
SSM_N_GROUP = 2  # key heads
SSM_DT_RANK = 2  # value heads
SSM_D_INNER = SSM_D_STATE * SSM_DT_RANK
SSM_D_CONV = 4
CONST_DIM = N_EMBD - 1
PREV_GAIN = 0.35
TAIL_SCALE = 0.05
ATTN_SCALE = 0.35
V_OFFSET = 6.0
DRAFT_ATTN_SCALE = 0.1  # the hybrid draft model's attention layer
SEED = 4321
CONTEXT = 4096

_Q8 = gguf.GGMLQuantizationType.Q8_0
_Q4 = gguf.GGMLQuantizationType.Q4_0
KEY_DIM = SSM_D_STATE * SSM_N_GROUP
CONV_DIM = 2 * KEY_DIM + SSM_D_INNER


def _q8_roundtrip(a: np.ndarray) -> np.ndarray:
    return gguf.quants.dequantize(gguf.quants.quantize(a, _Q8), _Q8).reshape(a.shape)


def _rmsnorm(x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)


def _silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


def _embeddings(rng: np.random.Generator, n_vocab: int) -> np.ndarray:
    e = rng.normal(0.0, 1.0, (n_vocab, N_EMBD)).astype(np.float32)
    content = e[:, :CONST_DIM]
    # content sum of squares = 63, constant dim = 1: every row has RMS exactly 1
    content *= np.sqrt(CONST_DIM / np.sum(content * content, axis=1, keepdims=True))
    e[:, CONST_DIM] = 1.0
    return e


def _prev_token_layer(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Layer 0: a gated delta net that outputs a (nearly linear) function of the previous token."""
    d = N_EMBD
    wqkv = np.zeros((CONV_DIM, d), np.float32)
    qk_dir = rng.normal(0.0, 1.0, KEY_DIM).astype(np.float32)
    wqkv[:KEY_DIM, CONST_DIM] = qk_dir  # q: constant
    wqkv[KEY_DIM : 2 * KEY_DIM, CONST_DIM] = qk_dir  # k: the same constant (q.k = 1 after L2 norm)
    # v: V_OFFSET (keeps SiLU near-linear) + a projection of content dims 0..31 only, so the
    # offset sits alone in its Q8_0 block (dims 32..63) and the projection quantizes finely.
    wqkv[2 * KEY_DIM :, CONST_DIM] = V_OFFSET
    wqkv[2 * KEY_DIM :, :32] = rng.normal(0.0, 1.0 / np.sqrt(32), (SSM_D_INNER, 32))
    conv = np.zeros((CONV_DIM, SSM_D_CONV), np.float32)
    conv[: 2 * KEY_DIM, SSM_D_CONV - 1] = 1.0  # q, k: current token
    conv[2 * KEY_DIM :, SSM_D_CONV - 2] = 1.0  # v: previous token
    gate = np.zeros((SSM_D_INNER, d), np.float32)
    gate[:, CONST_DIM] = 3.0  # z = 3: silu(z) is a constant gain
    beta = np.zeros((SSM_DT_RANK, d), np.float32)
    beta[:, CONST_DIM] = 20.0  # beta = sigmoid(20) = 1: the delta rule overwrites the state
    # out: content dims only, zero sum over each head's 16 inputs (cancels per-head constants)
    out = rng.normal(0.0, 1.0, (d, SSM_D_INNER)).astype(np.float32)
    out[CONST_DIM] = 0.0
    for h in range(SSM_DT_RANK):
        block = out[:, h * SSM_D_STATE : (h + 1) * SSM_D_STATE]
        block -= block.mean(axis=1, keepdims=True)
    return {
        "attn_qkv.weight": wqkv,
        "attn_gate.weight": gate,
        "ssm_conv1d.weight": conv,
        "ssm_dt.bias": np.zeros(SSM_DT_RANK, np.float32),
        "ssm_a": -np.ones(SSM_DT_RANK, np.float32),
        "ssm_beta.weight": beta,
        "ssm_alpha.weight": np.zeros((SSM_DT_RANK, d), np.float32),
        "ssm_norm.weight": np.ones(SSM_D_STATE, np.float32),
        "ssm_out.weight": out,  # rescaled to PREV_GAIN in _weights
        "ffn_gate.weight": np.zeros((N_FF, d), np.float32),
        "ffn_up.weight": np.zeros((N_FF, d), np.float32),
        "ffn_down.weight": np.zeros((d, N_FF), np.float32),
    }


def _prev_token_term(layer: dict[str, np.ndarray], emb: np.ndarray) -> np.ndarray:
    """What layer 0 adds at position t+1 for token x_t = each row of ``emb`` (numpy model of the graph)."""
    n = _rmsnorm(emb)
    wv = _q8_roundtrip(layer["attn_qkv.weight"])[2 * KEY_DIM :]
    v = _silu(n @ wv.T) / np.sqrt(SSM_D_STATE)
    v = v.reshape(len(emb), SSM_DT_RANK, SSM_D_STATE)
    z = _silu(3.0 * n[:, CONST_DIM])[:, None, None]
    o = (_rmsnorm(v) * z).reshape(len(emb), SSM_D_INNER)
    return o @ _q8_roundtrip(layer["ssm_out.weight"]).T


def _random_recurrent_layer(rng: np.random.Generator, scale: float) -> dict[str, np.ndarray]:
    d = N_EMBD

    def mat(rows: int, cols: int, gain: float = 1.0) -> np.ndarray:
        return rng.normal(0.0, gain / np.sqrt(cols), (rows, cols)).astype(np.float32)

    return {
        "attn_qkv.weight": mat(CONV_DIM, d),
        "attn_gate.weight": mat(SSM_D_INNER, d),
        "ssm_conv1d.weight": rng.normal(0.0, 0.5, (CONV_DIM, SSM_D_CONV)).astype(np.float32),
        "ssm_dt.bias": rng.normal(0.0, 0.5, SSM_DT_RANK).astype(np.float32),
        "ssm_a": -np.exp(rng.normal(0.0, 0.5, SSM_DT_RANK)).astype(np.float32),
        "ssm_beta.weight": mat(SSM_DT_RANK, d),
        "ssm_alpha.weight": mat(SSM_DT_RANK, d),
        "ssm_norm.weight": np.ones(SSM_D_STATE, np.float32),
        "ssm_out.weight": mat(d, SSM_D_INNER) * scale,
        "ffn_gate.weight": mat(N_FF, d),
        "ffn_up.weight": mat(N_FF, d),
        "ffn_down.weight": mat(d, N_FF) * scale,
    }


def _attention_layer(rng: np.random.Generator, scale: float) -> dict[str, np.ndarray]:
    d = N_EMBD

    def mat(rows: int, cols: int, gain: float = 1.0) -> np.ndarray:
        return rng.normal(0.0, gain / np.sqrt(cols), (rows, cols)).astype(np.float32)

    return {
        # per head: HEAD_DIM query rows then HEAD_DIM output-gate rows
        "attn_q.weight": mat(2 * HEAD_DIM * N_HEAD, d, 2.0),
        "attn_k.weight": mat(HEAD_DIM * N_HEAD_KV, d, 2.0),
        "attn_v.weight": mat(HEAD_DIM * N_HEAD_KV, d),
        "attn_output.weight": mat(d, HEAD_DIM * N_HEAD) * scale,
        "attn_q_norm.weight": np.ones(HEAD_DIM, np.float32),
        "attn_k_norm.weight": np.ones(HEAD_DIM, np.float32),
        "ffn_gate.weight": mat(N_FF, d),
        "ffn_up.weight": mat(N_FF, d),
        "ffn_down.weight": mat(d, N_FF) * scale,
    }


def _fit_mtp_h_proj(emb: np.ndarray, prev: dict[str, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """B (64 x 64): least-squares map from the normalized hidden state h_t to G(x_t)."""
    n = 24000
    idx = rng.integers(0, len(emb), (n, 2))
    e_prev, e_cur = emb[idx[:, 0]], emb[idx[:, 1]]
    g_cur = _prev_token_term(prev, e_cur)
    h = _rmsnorm(e_cur + _prev_token_term(prev, e_prev))  # layers 1-3 ignored
    b, *_ = np.linalg.lstsq(h, g_cur, rcond=None)
    return b.T.astype(np.float32)


def _weights(n_vocab: int, with_mtp: bool, attn_scale: float = ATTN_SCALE) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(SEED)
    emb = _embeddings(rng, n_vocab)
    tensors: dict[str, np.ndarray] = {
        "token_embd.weight": emb,
        "output_norm.weight": np.ones(N_EMBD, np.float32),
        "output.weight": rng.normal(0.0, 1.0, (n_vocab, N_EMBD)).astype(np.float32),
    }
    prev = _prev_token_layer(rng)
    # scale ssm_out so G has RMS PREV_GAIN (measured on a sample, before quantization)
    sample = _q8_roundtrip(emb[rng.integers(0, n_vocab, 2048)])
    gain = float(np.sqrt(np.mean(_prev_token_term(prev, sample) ** 2)))
    prev["ssm_out.weight"] *= PREV_GAIN / gain
    layers = [
        prev,
        _random_recurrent_layer(rng, TAIL_SCALE),
        _random_recurrent_layer(rng, TAIL_SCALE),
        _attention_layer(rng, attn_scale),
    ]
    for il, layer in enumerate(layers):
        tensors[f"blk.{il}.attn_norm.weight"] = np.ones(N_EMBD, np.float32)
        tensors[f"blk.{il}.post_attention_norm.weight"] = np.ones(N_EMBD, np.float32)
        for name, array in layer.items():
            tensors[f"blk.{il}.{name}"] = array
    if with_mtp:
        il = N_TRUNK
        b = _fit_mtp_h_proj(_q8_roundtrip(emb), prev, rng)
        eh = np.zeros((N_EMBD, 2 * N_EMBD), np.float32)
        eh[:, :N_EMBD] = np.eye(N_EMBD, dtype=np.float32)  # concat order: [e_norm, h_norm]
        eh[:, N_EMBD:] = b
        tensors[f"blk.{il}.nextn.eh_proj.weight"] = eh
        tensors[f"blk.{il}.nextn.enorm.weight"] = np.ones(N_EMBD, np.float32)
        tensors[f"blk.{il}.nextn.hnorm.weight"] = np.ones(N_EMBD, np.float32)
        tensors[f"blk.{il}.attn_norm.weight"] = np.ones(N_EMBD, np.float32)
        tensors[f"blk.{il}.post_attention_norm.weight"] = np.ones(N_EMBD, np.float32)
        for name, array in layers[N_TRUNK - 1].items():
            tensors[f"blk.{il}.{name}"] = array.copy()
    return tensors


def _is_quantized(name: str, array: np.ndarray) -> bool:
    return array.ndim == 2 and array.shape[1] % 32 == 0 and "ssm_conv1d" not in name


def write_hybrid(path: Path, tokenizer: Tokenizer, with_mtp: bool = True, attn_scale: float = ATTN_SCALE) -> Path:
    """Write the qwen35 hybrid target (with or without its MTP block) to ``path``; a smaller
    ``attn_scale`` gives a draft that follows the same trunk with less context (agrees often)."""
    arch = "qwen35"
    n_layer_all = N_TRUNK + (1 if with_mtp else 0)
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_name("specchat-test-hybrid" + ("-mtp" if with_mtp else ""))
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(n_layer_all)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD_KV)
    writer.add_key_length(HEAD_DIM)
    writer.add_value_length(HEAD_DIM)
    writer.add_rope_dimension_count(HEAD_DIM)
    writer.add_rope_dimension_sections([3, 3, 2, 0])
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_ssm_conv_kernel(SSM_D_CONV)
    writer.add_ssm_state_size(SSM_D_STATE)
    writer.add_ssm_group_count(SSM_N_GROUP)
    writer.add_ssm_time_step_rank(SSM_DT_RANK)
    writer.add_ssm_inner_size(SSM_D_INNER)
    writer.add_full_attention_interval(4)
    if with_mtp:
        writer.add_nextn_predict_layers(1)
    writer.add_vocab_size(len(tokenizer.tokens))
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    _write_tokenizer(writer, tokenizer)
    for name, array in _weights(len(tokenizer.tokens), with_mtp, attn_scale).items():
        if name == "output.weight":
            writer.add_tensor(name, gguf.quants.quantize(array, _Q4), raw_dtype=_Q4)
        elif _is_quantized(name, array):
            writer.add_tensor(name, gguf.quants.quantize(array, _Q8), raw_dtype=_Q8)
        else:
            writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


# ------------------------------------------------------------------------ entry points
def build_hybrid_mtp(directory: Path) -> Path:
    """``directory/hybrid-mtp.gguf``: the qwen35 target with its MTP block (reused if present)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "hybrid-mtp.gguf"
    if not path.exists():
        write_hybrid(path, read_tokenizer(default_model_path()), with_mtp=True)
    return path


def build_hybrid(directory: Path) -> Path:
    """``directory/hybrid.gguf``: the same qwen35 trunk without an MTP block."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "hybrid.gguf"
    if not path.exists():
        write_hybrid(path, read_tokenizer(default_model_path()), with_mtp=False)
    return path


def build_hybrid_draft(directory: Path) -> Path:
    """``directory/hybrid-draft.gguf``: a same-vocabulary qwen35 draft model for the hybrid
    targets: their trunk with its attention layer scaled down (so it agrees often, not always)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "hybrid-draft.gguf"
    if not path.exists():
        write_hybrid(path, read_tokenizer(default_model_path()), with_mtp=False, attn_scale=DRAFT_ATTN_SCALE)
    return path
