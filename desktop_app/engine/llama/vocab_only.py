"""A GGUF file's vocabulary without its weights: what the draft-compatibility checks need.

llama.cpp loads only the tokenizer when ``vocab_only`` is set, so checking a 40 GB target
against a draft takes a fraction of a second and almost no memory. The model library runs these
checks in a child process of its own (desktop_app/library/vocab.py): a file that crashes
llama.cpp here takes down that child, never the window.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType

import llama_cpp

from desktop_app.engine.errors import EngineError, ModelLoadError
from desktop_app.engine.llama.backend import clear_log, ensure_backend, load_failure_reason
from desktop_app.engine.llama.compat import DraftCompatibility, check_draft
from desktop_app.engine.llama.drafting import DraftingSupport, drafting_support
from desktop_app.engine.llama.gguf_file import read_gguf
from desktop_app.engine.llama.vocab import VocabProperties

PairCheck = tuple[DraftCompatibility, DraftingSupport | None]
"""One (target, draft) pair's verdict, and which drafting the pair supports (None when a file
could not be read: the verdict says why)."""


class VocabOnlyModel(VocabProperties):
    """The tokenizer of one GGUF file; satisfies :class:`desktop_app.engine.llama.compat.VocabView`."""

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
            reason = load_failure_reason()
            raise ModelLoadError(f"llama.cpp could not read the vocabulary of {self.path.name}: {reason}")
        self._model = model
        self.info = read_gguf(self.path, check_size=False)
        self.recurrent = bool(llama_cpp.llama_model_is_recurrent(model)) or bool(llama_cpp.llama_model_is_hybrid(model))
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
        except Exception:  # noqa: BLE001 - a finaliser must never raise
            pass


def check_pair(target: str | Path, draft: str | Path) -> tuple[DraftCompatibility, DraftingSupport]:
    """Whether ``draft`` shares ``target``'s vocabulary, and which drafting the pair supports."""
    with VocabOnlyModel(target) as t, VocabOnlyModel(draft) as d:
        verdict = check_draft(t, d)
        return verdict, pair_drafting(t, d, verdict)


def pair_drafting(
    target: VocabOnlyModel, draft: VocabOnlyModel | None, verdict: DraftCompatibility | None
) -> DraftingSupport:
    return drafting_support(target.info, draft.info if draft is not None else None, target.recurrent, verdict)


def check_pairs(
    paths: Sequence[str | Path],
    pairs: Sequence[tuple[int, int]],
    step: Callable[[tuple[int, ...]], None] | None = None,
) -> list[PairCheck]:
    """Each (target, draft) pair of ``pairs`` (indexes into ``paths``), every file loaded once.

    A file llama.cpp cannot read gives its pairs a verdict with the reason. ``step`` hears what
    comes next before it runs: ``(i,)`` before file ``i`` is loaded, ``(t, d)`` before a pair is
    compared, so a caller watching from another process knows which file crashed it."""
    vocabs: list[VocabOnlyModel | str] = []
    try:
        for index, path in enumerate(paths):
            if step is not None:
                step((index,))
            try:
                vocabs.append(VocabOnlyModel(path))
            except EngineError as exc:
                vocabs.append(str(exc))
        checks: list[PairCheck] = []
        for target, draft in pairs:
            t, d = vocabs[target], vocabs[draft]
            if isinstance(t, str) or isinstance(d, str):
                checks.append((DraftCompatibility([t if isinstance(t, str) else str(d)]), None))
                continue
            if step is not None:
                step((target, draft))
            verdict = check_draft(t, d)
            checks.append((verdict, pair_drafting(t, d, verdict)))
        return checks
    finally:
        for vocab in vocabs:
            if isinstance(vocab, VocabOnlyModel):
                vocab.close()
