"""Our llama.cpp patch (packaging/llama/batch-rows.patch): a batch multiplied by Q4_1 or Q8_0
weights takes each weight row once for up to 4 of its rows, and a small batch against K-quant
weights keeps to the kernels a single row takes (llama.cpp's repacked gemm and tiled kernels compute
a row differently inside a batch). Verifying a draft is such a batch, and speculation is lossless
only if every row of it comes out exactly as the same row decoded alone: these tests compare the
logits bit for bit, at every batch size a draft can make (groups of 4 and every remainder, up to
the largest draft the app allows)."""

from __future__ import annotations

import ctypes
import platform
import re
import subprocess
import sys
from pathlib import Path

import llama_cpp
import numpy as np
import pytest

from desktop_app.engine.api import DRAFT_K, ModelOptions
from desktop_app.engine.llama.backend import cpu_has_batch_rows
from desktop_app.engine.llama.model import LlamaModel

X86 = platform.machine().lower() in ("x86_64", "amd64")
PATCH = Path(__file__).resolve().parents[2] / "packaging" / "llama" / "batch-rows.patch"
LARGEST_VERIFY_PASS = DRAFT_K.high + 1  # the last token and the largest draft


def _cpu_flags() -> str | None:
    """Linux's CPU flags (None elsewhere)."""
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return None


def _has_avx2() -> bool:
    flags = _cpu_flags()
    return cpu_has_batch_rows() if flags is None else " avx2" in flags  # elsewhere the build's own answer


@pytest.mark.skipif(not X86, reason="the patch's kernels are for x86 CPUs (elsewhere llama.cpp's own run)")
def test_our_build_has_the_batch_kernels() -> None:
    """The Makefile builds llama.cpp with the patch: a build without it verifies drafts ~30% slower."""
    assert cpu_has_batch_rows() == _has_avx2()


def _has_avx512_vnni() -> bool:
    flags = _cpu_flags() or ""
    return all(f" {flag}" in flags for flag in ("avx512f", "avx512bw", "avx512dq", "avx512_vnni"))


@pytest.mark.skipif(not X86, reason="the patch's kernels are for x86 CPUs (elsewhere llama.cpp's own run)")
def test_our_build_multiplies_verify_passes_with_the_avx512_kernels_where_the_cpu_has_them() -> None:
    """packaging/llama/verify-cols.patch: on an AVX-512 CPU a verify pass of 65 rows costs 0.76x
    what the AVX2 batch kernels took (docs/engine-notes.md); the tests below check its rows."""
    features = llama_cpp.llama_print_system_info().decode()
    assert ("SPECCHAT_PACKED_COLS = 1" in features) == _has_avx512_vnni()


def test_the_patch_keeps_the_largest_verify_pass_on_the_single_row_kernels() -> None:
    """Its K-quant limit (a C constant) must cover every draft size the app lets a user choose."""
    limit = re.search(r"^\+#define SPECCHAT_EXACT_ROWS (\d+)$", PATCH.read_text(), re.MULTILINE)
    assert limit is not None
    assert int(limit.group(1)) >= LARGEST_VERIFY_PASS


def _has_amx() -> bool:
    return " amx_int8" in (_cpu_flags() or "")


DECODE_IN_A_CHILD = """
import sys
from pathlib import Path
from desktop_app.engine.api import ModelOptions
from desktop_app.engine.llama.model import LlamaModel
model = LlamaModel(Path(sys.argv[1]), ModelOptions(n_gpu_layers=0, n_threads=2, n_ctx=256))
tokens = model.tokenize("Rewrite this sentence: the cat sat on the mat.")
model.prefill(tokens, need_logits=True)
model.decode_all_rows(tokens[:9])
model.decode_one(tokens[0])
print(int(model.logits().argmax()))
"""


def test_prefill_a_batch_and_a_single_row_decode_on_this_cpu(default_model: Path) -> None:
    """In a child process, so that a fault in llama.cpp's kernels fails this test by name rather
    than killing the suite: on a CPU with AMX (Sapphire Rapids), llama.cpp put the weights in AMX
    buffers and every decode crashed (our patch keeps them out; llama.cpp #20824)."""
    out = subprocess.run(
        [sys.executable, "-c", DECODE_IN_A_CHILD, str(default_model)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.returncode == 0, f"decoding crashed (rc {out.returncode}, AMX CPU: {_has_amx()}): {out.stderr[-2000:]}"
    assert out.stdout.strip().isdigit()


def _rows_alone_and_batched(path: Path, prompt: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    model = LlamaModel(path, ModelOptions(n_gpu_layers=0, n_threads=2, n_ctx=512))
    try:
        prompt_tokens = model.tokenize(prompt)
        model.prefill(prompt_tokens[:-1], need_logits=False)
        text = " The quick brown fox jumps over the lazy dog again and again, and then it sleeps." * 4
        draft = model.tokenize(text, add_special=False)[: LARGEST_VERIFY_PASS - 1]
        assert len(draft) == LARGEST_VERIFY_PASS - 1
        batch = [prompt_tokens[-1], *draft]
        alone = []
        for token in batch:
            model.decode_one(token)
            alone.append(model.logits().copy())
        batched = []
        for size in range(2, len(batch) + 1):
            model.truncate(len(prompt_tokens) - 1)
            model.decode_all_rows(batch[:size])
            batched.append(np.stack([model.logits(row).copy() for row in range(size)]))
        return alone, batched
    finally:
        model.close()


def _assert_rows_identical(alone: list[np.ndarray], batched: list[np.ndarray]) -> None:
    for rows in batched:
        for row, logits in enumerate(rows):
            assert np.array_equal(logits, alone[row]), f"row {row} of a batch of {len(rows)} differs from it alone"


def test_every_row_of_a_batch_equals_the_row_alone_on_the_embedded_q4_1_model(default_model: Path) -> None:
    alone, batched = _rows_alone_and_batched(default_model, "Rewrite this sentence: the cat sat on the mat.")
    assert len(batched) == LARGEST_VERIFY_PASS - 1  # sizes 2 .. the largest verify pass
    _assert_rows_identical(alone, batched)


def test_every_row_of_a_batch_equals_the_row_alone_on_a_q8_0_model(models) -> None:
    alone, batched = _rows_alone_and_batched(models.target, "Tell me a story about a robot.")
    _assert_rows_identical(alone, batched)


def _requantized(source: Path, target: Path, ftype: int) -> Path:
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.allow_requantize = True
    params.nthread = 2
    assert llama_cpp.llama_model_quantize(str(source).encode(), str(target).encode(), ctypes.byref(params)) == 0
    return target


@pytest.mark.parametrize(
    "ftype", [llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_K_M, llama_cpp.LLAMA_FTYPE_MOSTLY_Q6_K], ids=["Q4_K_M", "Q6_K"]
)
def test_every_row_of_a_batch_equals_the_row_alone_on_k_quant_models(
    default_model: Path, tmp_path: Path, ftype: int
) -> None:
    """The catalog's usual format. Without the patch, rows differed from a batch of 4 on (Q4_K,
    repacked: gemm) and of 8 on (Q6_K: the tiled kernel)."""
    model = _requantized(default_model, tmp_path / "requantized.gguf", ftype)
    alone, batched = _rows_alone_and_batched(model, "Rewrite this sentence: the cat sat on the mat.")
    _assert_rows_identical(alone, batched)


def test_a_verify_pass_that_sees_more_cache_cells_than_its_rows_alone_is_still_exact(default_model: Path) -> None:
    """A verify pass deep in a conversation spans more cache cells than its first rows decoded
    alone (attention runs over the cells up to the padded count, the rest masked). Its rows must
    still come out bit for bit: padded to 32 cells, an AVX-512 CPU summed a row's last 32 cells
    in a scalar tail alone and in the vector loop inside the larger batch, and greedy text with
    speculation parted from plain decoding (packaging/llama/kv-padding.patch)."""
    model = LlamaModel(default_model, ModelOptions(n_gpu_layers=0, n_threads=2, n_ctx=512))
    try:
        sentence = "Rewrite this sentence: the cat sat on the mat, and then the dog came in and sat too. "
        context = model.tokenize(sentence * 12)[:114]  # rows from position 113: the batch reaches 178
        model.prefill(context[:-1], need_logits=False)
        start = len(context) - 1
        draft = model.tokenize(" The quick brown fox jumps over the lazy dog again and again." * 6, add_special=False)
        batch = [context[-1], *draft[: LARGEST_VERIFY_PASS - 1]]
        alone = []
        for token in batch:
            model.decode_one(token)
            alone.append(model.logits().copy())
        batched = []
        for size in (2, 16, 17, 33, 48, LARGEST_VERIFY_PASS):
            model.truncate(start)
            model.decode_all_rows(batch[:size])
            batched.append(np.stack([model.logits(row).copy() for row in range(size)]))
    finally:
        model.close()
    _assert_rows_identical(alone, batched)
