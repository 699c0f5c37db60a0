"""Which attention kernel a model computes with: on the CPU, not flash attention unless asked.

llama.cpp's automatic choice enables flash attention wherever the backend supports it; its CPU
kernel costs more the deeper the context (at 354 tokens into a conversation SmolLM2 decoded at
60 tok/s with it and 92 without), so a CPU-only model has it off unless the user asks for it,
on builds whose verify passes never take llamafile's kernels (ours: they multiply only prompt
reading's larger batches): with them, a row decoded inside a batch differs from the same row
alone, and greedy answers with and without speculation would part.
"""

from __future__ import annotations

import pytest

from desktop_app.engine.api import ModelOptions, WorkerAddress
from desktop_app.engine.llama import model as model_module
from desktop_app.engine.llama.backend import cpu_has_inexact_llamafile
from desktop_app.engine.llama.model import LlamaModel, context_params, runs_on_cpu

FLASH_OFF, FLASH_ON, FLASH_AUTO = 0, 1, -1  # llama.cpp's llama_flash_attn_type


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (ModelOptions(), FLASH_OFF),  # "every layer on the GPU", on a machine without one
        (ModelOptions(n_gpu_layers=0), FLASH_OFF),
        (ModelOptions(flash_attn=True), FLASH_ON),  # the user's choice stands
        (ModelOptions(flash_attn=False), FLASH_OFF),
    ],
)
def test_a_model_on_the_cpu_computes_without_flash_attention(
    default_model, options: ModelOptions, expected: int
) -> None:
    model = LlamaModel(default_model, options)
    try:
        assert context_params(model.handle[0], options).flash_attn_type == expected
    finally:
        model.close()


def test_a_model_with_gpu_layers_leaves_it_to_llama_cpp(default_model, monkeypatch: pytest.MonkeyPatch) -> None:
    model = LlamaModel(default_model, ModelOptions(n_gpu_layers=0))
    try:
        monkeypatch.setattr(model_module.rpc, "local_gpus", lambda: [1])  # as on a machine with a GPU
        assert context_params(model.handle[0], ModelOptions()).flash_attn_type == FLASH_AUTO
        assert context_params(model.handle[0], ModelOptions(n_gpu_layers=0)).flash_attn_type == FLASH_OFF
    finally:
        model.close()


def test_workers_compute_attention_as_this_machine_does() -> None:
    """A target spread over workers answers as it does whole here (tests/remote check the tokens)."""
    spread = ModelOptions(workers=(WorkerAddress("127.0.0.1", 50052),))
    assert runs_on_cpu(spread) and model_module.default_flash_attn(spread) is False


def test_our_build_keeps_llamafile_kernels_out_of_verify_passes() -> None:
    """The Makefile's build lets them multiply only batches larger than any verify pass (what keeps
    flash attention off exact)."""
    assert not cpu_has_inexact_llamafile()


def test_a_build_with_llamafile_kernels_keeps_llama_cpp_s_choice(
    default_model, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = LlamaModel(default_model, ModelOptions(n_gpu_layers=0))
    try:
        monkeypatch.setattr(model_module, "cpu_has_inexact_llamafile", lambda: True)
        assert context_params(model.handle[0], ModelOptions()).flash_attn_type == FLASH_AUTO
        assert context_params(model.handle[0], ModelOptions(flash_attn=False)).flash_attn_type == FLASH_OFF
    finally:
        model.close()
