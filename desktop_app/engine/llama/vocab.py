"""Vocabulary facts read from a llama.cpp vocab: what the draft-compatibility check needs.

Shared by a fully loaded model and a vocabulary-only one (the model library's pair check).
"""

from __future__ import annotations

import hashlib
from functools import cached_property
from typing import Any

import llama_cpp


class VocabProperties:
    """Mixin: expects ``self.vocab`` (a llama_vocab pointer) and ``self.n_vocab``."""

    vocab: Any
    n_vocab: int

    def tokenize(self, text: str, add_special: bool = True, parse_special: bool = True) -> list[int]:
        data = text.encode("utf-8")
        capacity = len(data) + 8
        buf = (llama_cpp.llama_token * capacity)()
        n = llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, capacity, add_special, parse_special)
        if n < 0:
            capacity = -n
            buf = (llama_cpp.llama_token * capacity)()
            n = llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, capacity, add_special, parse_special)
        return list(buf[:n])

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

    @property
    def fim_ids(self) -> tuple[int, int, int] | None:
        """The fill-in-the-middle tokens (prefix, suffix, middle), or None when the vocabulary
        has none (llama.cpp reads them from the GGUF or finds them by their usual texts)."""
        ids = (
            int(llama_cpp.llama_vocab_fim_pre(self.vocab)),
            int(llama_cpp.llama_vocab_fim_suf(self.vocab)),
            int(llama_cpp.llama_vocab_fim_mid(self.vocab)),
        )
        return ids if min(ids) >= 0 else None

    def token_text(self, token: int) -> bytes:
        return llama_cpp.llama_vocab_get_text(self.vocab, token) or b""

    @cached_property
    def vocab_fingerprint(self) -> str:
        """Hex digest of the vocabulary (its type, size and every token's text): equal for
        models whose token ids mean the same text (what a table of token ids learned with one
        may be used with). Computed once (about 30 ms for 50k tokens)."""
        digest = hashlib.sha256(f"{self.vocab_type}:{self.n_vocab}".encode())
        for token in range(self.n_vocab):
            text = self.token_text(token)
            digest.update(len(text).to_bytes(4, "little") + text)
        return digest.hexdigest()[:32]
