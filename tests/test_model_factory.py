"""The test model factory: small, deterministic, loadable, and a draft that mostly agrees."""

from __future__ import annotations

import hashlib
from pathlib import Path

import llama_cpp
import numpy as np
import pytest

from desktop_app.engine.llama.model import LlamaModel
from tests.model_factory import build_all

MB = 1_000_000


def test_every_factory_file_is_small(models) -> None:
    for name, path in vars(models).items():
        assert path.stat().st_size < 10 * MB, f"{name} is {path.stat().st_size / MB:.1f} MB"


def test_factory_is_deterministic(models, tmp_path: Path) -> None:
    again = build_all(tmp_path)
    for name in ("target", "draft"):
        first = hashlib.sha256(getattr(models, name).read_bytes()).hexdigest()
        second = hashlib.sha256(getattr(again, name).read_bytes()).hexdigest()
        assert first == second, f"{name} differs between two builds"


def test_pair_loads_in_llama_cpp_python_high_level_api(models) -> None:
    llm = llama_cpp.Llama(model_path=str(models.target), n_ctx=256, verbose=False)
    out = llm.create_completion("Hello", max_tokens=4, temperature=0.0)
    assert out["usage"]["completion_tokens"] == 4
    assert llm.metadata["tokenizer.ggml.pre"] == "smollm"
    assert "<|im_start|>" in llm.metadata["tokenizer.chat_template"]


def test_draft_agrees_with_target_on_most_but_not_all_positions(models) -> None:
    target, draft = LlamaModel(models.target), LlamaModel(models.draft)
    prompt = target.tokenize("<|im_start|>user\nTell me a story about a robot.<|im_end|>\n<|im_start|>assistant\n")
    target.prefill(prompt)
    greedy: list[int] = []
    for _ in range(64):
        token = int(np.argmax(target.logits(-1)))
        greedy.append(token)
        target.decode_one(token)
    agree = 0
    for i, token in enumerate(greedy):  # the draft sees the target's own text (teacher forcing)
        draft.prefill(prompt + greedy[:i])
        agree += int(np.argmax(draft.logits(-1))) == token
    assert len(set(greedy)) > 20, "the target should not just repeat itself"
    assert 0.6 * len(greedy) <= agree < len(greedy), f"draft agreed on {agree}/{len(greedy)}"


@pytest.mark.slow  # builds a model in a subprocess
def test_the_hybrid_mtp_model_is_written_by_the_factory_cli(tmp_path: Path) -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "tests.model_factory", "--hybrid-mtp", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    path = tmp_path / "hybrid-mtp.gguf"
    assert path.stat().st_size < 10 * MB
    model = LlamaModel(path)
    try:
        assert model.has_mtp and model.is_recurrent and model.can_roll_back
    finally:
        model.close()
