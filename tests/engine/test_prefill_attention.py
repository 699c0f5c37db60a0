"""Our llama.cpp patch packaging/llama/prefill-attention.patch: with flash attention off (the
engine's default on the CPU), a batch of more tokens than any verify pass (prompt reading's
chunks) still computes attention with flash attention's kernel, which never writes the score
matrix out; a verify pass and a single row keep the exact path (test_batch_rows.py,
test_lossless.py). The rows a prompt chunk computes this way must agree with the same rows read in
verify-sized pieces: a misread V cache (the patch transposes it for the kernel) or mask would
move the logits far more than the kernels' rounding does."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from desktop_app.engine.api import DRAFT_K, ModelOptions
from desktop_app.engine.llama.model import LlamaModel

PATCHES = Path(__file__).resolve().parents[2] / "packaging" / "llama"
LARGEST_VERIFY_PASS = DRAFT_K.high + 1  # the last token and the largest draft
TEXT = (
    "The harbour office counted the winter supplies after the storm had closed the road. "
    "Amara repaired the broken pump while the weather held, and Bruno wrote a report on the flooding. "
)


def test_the_patch_s_row_limit_is_the_largest_verify_pass() -> None:
    patch = (PATCHES / "prefill-attention.patch").read_text()
    limit = re.search(r"^\+#define SPECCHAT_EXACT_ROWS (\d+)$", patch, re.M)
    assert limit is not None and int(limit.group(1)) == LARGEST_VERIFY_PASS
    assert "q->ne[1] > SPECCHAT_EXACT_ROWS" in patch  # the batch's token count, as prefill-gemm's ne11


def _rows(model: LlamaModel, tokens: list[int], chunk: int) -> np.ndarray:
    model.truncate(0)
    rows = []
    for start in range(0, len(tokens), chunk):
        piece = tokens[start : start + chunk]
        model.decode_all_rows(piece)
        rows.extend(model.logits(row).copy() for row in range(len(piece)))
    return np.stack(rows)


def test_rows_read_in_one_prompt_chunk_agree_with_the_same_rows_read_in_verify_sized_pieces(
    default_model: Path,
) -> None:
    model = LlamaModel(default_model, ModelOptions(n_gpu_layers=0, n_threads=2, n_ctx=1024, flash_attn=False))
    try:
        tokens = model.tokenize(TEXT * 12)[:400]
        assert len(tokens) == 400
        whole = _rows(model, tokens, 400)  # one chunk of 400 rows: flash attention (and llamafile)
        pieces = _rows(model, tokens, LARGEST_VERIFY_PASS)  # the exact path
    finally:
        model.close()
    spread = float(np.max(pieces) - np.min(pieces))
    worst = float(np.max(np.abs(whole - pieces)))
    # Rounding alone moves a logit by up to ~2% of their range after 30 layers (1.44 of 65.6 with
    # llamafile's kernels and no flash attention, 1.46 with both); a misread cache moves them all.
    assert worst < 0.05 * spread, f"logits differ by up to {worst:.3f} (their range {spread:.1f})"
    same_choice = np.mean(whole.argmax(axis=1) == pieces.argmax(axis=1))
    assert same_choice >= 0.98, f"the greedy choice differs on {1 - same_choice:.1%} of the rows"
