"""A tiny mamba GGUF test model: recurrent, and its arch is not in llama.cpp's
``llm_arch_supports_rs_rollback``, so ``n_rs_seq`` is clamped to 0 and ``llama_memory_seq_rm``
of a suffix fails (the rollback tests' target that cannot roll back). It shares the hybrid
models' width, context, seed and quantization (``tests/factory_hybrid.py``)."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

from desktop_app.engine.llama.default_model import default_model_path
from tests.factory_hybrid import _Q4, _Q8, CONTEXT, N_EMBD, SEED, SSM_D_CONV, _is_quantized
from tests.model_factory import Tokenizer, _write_tokenizer, read_tokenizer

MAMBA_LAYERS = 2
MAMBA_D_STATE = 16
MAMBA_DT_RANK = 4


def write_mamba(path: Path, tokenizer: Tokenizer) -> Path:
    """A 2-layer mamba model: recurrent, and its arch is not in llama.cpp's rollback list."""
    rng = np.random.default_rng(SEED + 1)
    d, d_inner, n_vocab = N_EMBD, 2 * N_EMBD, len(tokenizer.tokens)

    def mat(rows: int, cols: int, gain: float = 1.0) -> np.ndarray:
        return rng.normal(0.0, gain / np.sqrt(cols), (rows, cols)).astype(np.float32)

    tensors: dict[str, np.ndarray] = {
        "token_embd.weight": rng.normal(0.0, 1.0, (n_vocab, d)).astype(np.float32),
        "output_norm.weight": np.ones(d, np.float32),
        "output.weight": rng.normal(0.0, 1.0, (n_vocab, d)).astype(np.float32),
    }
    for il in range(MAMBA_LAYERS):
        a_log = np.log(np.tile(np.arange(1, MAMBA_D_STATE + 1, dtype=np.float32), (d_inner, 1)))
        tensors.update(
            {
                f"blk.{il}.attn_norm.weight": np.ones(d, np.float32),
                f"blk.{il}.ssm_in.weight": mat(2 * d_inner, d),
                f"blk.{il}.ssm_conv1d.weight": rng.normal(0.0, 0.5, (d_inner, SSM_D_CONV)).astype(np.float32),
                f"blk.{il}.ssm_conv1d.bias": np.zeros(d_inner, np.float32),
                f"blk.{il}.ssm_x.weight": mat(MAMBA_DT_RANK + 2 * MAMBA_D_STATE, d_inner),
                f"blk.{il}.ssm_dt.weight": mat(d_inner, MAMBA_DT_RANK),
                f"blk.{il}.ssm_dt.bias": np.full(d_inner, -2.0, np.float32),
                f"blk.{il}.ssm_a": -np.exp(a_log),
                f"blk.{il}.ssm_d": np.ones(d_inner, np.float32),
                f"blk.{il}.ssm_out.weight": mat(d, d_inner) * 0.5,
            }
        )
    writer = gguf.GGUFWriter(str(path), "mamba")
    writer.add_name("specchat-test-no-rollback")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(d)
    writer.add_block_count(MAMBA_LAYERS)
    writer.add_feed_forward_length(0)
    writer.add_head_count(0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_ssm_conv_kernel(SSM_D_CONV)
    writer.add_ssm_inner_size(d_inner)
    writer.add_ssm_state_size(MAMBA_D_STATE)
    writer.add_ssm_time_step_rank(MAMBA_DT_RANK)
    writer.add_vocab_size(n_vocab)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    _write_tokenizer(writer, tokenizer)
    for name, array in tensors.items():
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


def build_no_rollback(directory: Path) -> Path:
    """``directory/no-rollback.gguf``: a recurrent (mamba) target llama.cpp cannot roll back."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "no-rollback.gguf"
    if not path.exists():
        write_mamba(path, read_tokenizer(default_model_path()))
    return path
