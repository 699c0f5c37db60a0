"""The model the agents talk to, built as the factory's ``tools`` model is (Qwen 2.5's
tool-calling template, random weights, the SmolLM2 tokenizer) with two layers (``LAYERS``),
declared as trained for 32,768 tokens (agents send 16k-26k-token prompts, and a model serves at
most the context it was trained for), and with its end-of-turn token's output row scaled up so
that a greedy or sampled answer ends after some thirty tokens (a random model otherwise talks
until ``max_tokens`` or the context runs out). Its answers are nonsense: these tests check the
protocol, not the words."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import numpy as np

from desktop_app.engine.llama.default_model import default_model_path
from tests import model_factory as mf

CONTEXT = 32768
# The end-of-turn logit's spread times EOS_GAIN: it is the largest of ~49k logits at about one
# position in thirty (P(Z > sqrt(2 ln 49152) / EOS_GAIN) ~ 0.03): answers of 1-100 tokens, rarely empty.
EOS_GAIN = 2.5
# Two layers, not the factory's six: reading a 27k-token prompt is attention over all of it, on CPU.
LAYERS = 2


def build_agent_model(directory: Path) -> Path:
    path = directory / "agents-tools-32k.gguf"
    if path.exists():
        return path
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = mf.read_tokenizer(default_model_path())
    tokenizer = mf.dataclasses.replace(tokenizer, chat_template=mf.TOOLS_TEMPLATE)
    end_of_turn = tokenizer.tokens.index("<|im_end|>")
    weights = mf._weights

    def with_short_answers(spec: mf.ModelSpec, n_vocab: int) -> dict[str, np.ndarray]:
        tensors = weights(spec, n_vocab)
        tensors["output.weight"][end_of_turn] *= EOS_GAIN
        return tensors

    with mock.patch.object(mf, "CONTEXT", CONTEXT), mock.patch.object(mf, "_weights", with_short_answers):
        mf.write_model(path.with_suffix(".tmp"), mf.ModelSpec("target", LAYERS), tokenizer)
    path.with_suffix(".tmp").rename(path)
    return path
