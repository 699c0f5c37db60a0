"""A GGUF file's vocabulary without its weights: what the draft-compatibility check needs.

llama.cpp loads only the tokenizer when ``vocab_only`` is set, so checking a 40 GB target
against a draft takes a fraction of a second and almost no memory.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

import llama_cpp

from desktop_app.engine.backend import clear_log, ensure_backend, recent_log
from desktop_app.engine.compat import DraftCompatibility, check_draft
from desktop_app.engine.errors import ModelLoadError
from desktop_app.engine.gguf_file import read_gguf


class VocabOnlyModel:
    """The tokenizer of one GGUF file; satisfies :class:`desktop_app.engine.compat.VocabView`."""

    def __init__(self, path: str | Path) -> None:
        ensure_backend()
        self.path = Path(path)
        read_gguf(self.path, check_size=False)  # clear errors for missing / non-GGUF files first
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        params.n_gpu_layers = 0
        clear_log()
        model = llama_cpp.llama_model_load_from_file(str(self.path).encode(), params)
        if not model:
            reason = _log_reason()
            raise ModelLoadError(f"llama.cpp could not read the vocabulary of {self.path.name}: {reason}")
        self._model = model
        self.vocab = llama_cpp.llama_model_get_vocab(model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self.vocab))

    def close(self) -> None:
        if self._model is not None:
            llama_cpp.llama_model_free(self._model)
            self._model = None

    def __enter__(self) -> VocabOnlyModel:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass

    @property
    def vocab_type(self) -> int:
        return int(llama_cpp.llama_vocab_type(self.vocab))

    @property
    def add_bos(self) -> bool:
        return bool(llama_cpp.llama_vocab_get_add_bos(self.vocab))

    @property
    def add_eos(self) -> bool:
        return bool(llama_cpp.llama_vocab_get_add_eos(self.vocab))

    @property
    def bos_id(self) -> int:
        return int(llama_cpp.llama_vocab_bos(self.vocab))

    @property
    def eos_id(self) -> int:
        return int(llama_cpp.llama_vocab_eos(self.vocab))

    def token_text(self, token: int) -> bytes:
        return llama_cpp.llama_vocab_get_text(self.vocab, token) or b""


def _log_reason() -> str:
    lines = recent_log(12)
    for line in reversed(lines):
        if "error loading model:" in line:
            return line.split("error loading model:", 1)[1].strip()
    return (lines[-1] if lines else "unknown error").strip()


def check_pair(target: str | Path, draft: str | Path) -> DraftCompatibility:
    """Whether ``draft`` can speed up ``target``, from their vocabularies alone."""
    with VocabOnlyModel(target) as t, VocabOnlyModel(draft) as d:
        return check_draft(t, d)
