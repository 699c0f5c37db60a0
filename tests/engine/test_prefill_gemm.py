"""Our llama.cpp patch packaging/llama/prefill-gemm.patch: llamafile's matrix kernels multiply only
batches of more rows than any speculative verify pass (prompt reading's chunks), where they read a
long prompt much faster without flash attention; a verify pass and a single row keep ggml's per-row
kernels, and come out bit for bit as plain decoding's (test_batch_rows.py, test_lossless.py)."""

from __future__ import annotations

import re
from pathlib import Path

import llama_cpp
import pytest

from desktop_app.engine.api import DRAFT_K
from desktop_app.engine.llama.backend import (
    build_gaps,
    cpu_has_inexact_llamafile,
    ensure_backend,
    llamafile_in_verify_passes,
    prefill_gemm_rows,
)

PATCHES = Path(__file__).resolve().parents[2] / "packaging" / "llama"
LARGEST_VERIFY_PASS = DRAFT_K.high + 1  # the last token and the largest draft


def _system_info() -> str:
    ensure_backend()
    return llama_cpp.llama_print_system_info().decode(errors="replace")


def test_the_patch_s_row_limit_is_the_largest_verify_pass() -> None:
    """Equal, not merely at least: a larger limit would leave prompt reading's smaller chunks on the
    slow kernels, a smaller one would let a verify pass reach llamafile's. The two cannot drift."""
    limit = re.search(r"^\+#define SPECCHAT_EXACT_ROWS (\d+)$", (PATCHES / "batch-rows.patch").read_text(), re.M)
    assert limit is not None and int(limit.group(1)) == LARGEST_VERIFY_PASS
    gemm = (PATCHES / "prefill-gemm.patch").read_text()
    assert "+    const bool specchat_sgemm = ne11 > SPECCHAT_EXACT_ROWS;" in gemm
    assert gemm.count("specchat_sgemm") == 3  # declared, and both llamafile_sgemm calls gated on it


def test_our_build_says_its_limit() -> None:
    """The Makefile builds llama.cpp with llamafile and the patch: its system info names the limit."""
    system = _system_info()
    if "LLAMAFILE = 1" not in system:
        pytest.skip("llama.cpp leaves llamafile out on this CPU (ARM SVE / i8mm)")
    assert prefill_gemm_rows(system) == LARGEST_VERIFY_PASS
    assert not cpu_has_inexact_llamafile()


@pytest.mark.parametrize(
    ("system", "inexact"),
    [
        ("AVX2 = 1 | ", False),  # no llamafile at all
        ("AVX2 = 1 | LLAMAFILE = 1 | ", True),  # stock llama.cpp: llamafile for every batch
        (f"LLAMAFILE = 1 | SPECCHAT_PREFILL_GEMM = {LARGEST_VERIFY_PASS} | ", False),
        (f"LLAMAFILE = 1 | SPECCHAT_PREFILL_GEMM = {LARGEST_VERIFY_PASS - 1} | ", True),  # an older, smaller limit
    ],
)
def test_a_build_counts_as_exact_only_if_llamafile_cannot_reach_a_verify_pass(system: str, inexact: bool) -> None:
    assert llamafile_in_verify_passes(system) is inexact
    assert any("llamafile" in gap for gap in build_gaps(system)) is inexact
