"""Whether a draft model can propose tokens for a target: llama.cpp's rule (common/speculative.cpp).

Same vocabulary type; same add-BOS/add-EOS flags and, where added, the same BOS/EOS ids;
vocabulary sizes within 128; identical token texts for every id from 5 up to the smaller size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

MAX_VOCAB_SIZE_DIFF = 128
FIRST_CHECKED_TOKEN = 5


class VocabView(Protocol):
    n_vocab: int

    @property
    def vocab_type(self) -> int: ...
    @property
    def add_bos(self) -> bool: ...
    @property
    def add_eos(self) -> bool: ...
    @property
    def bos_id(self) -> int: ...
    @property
    def eos_id(self) -> int: ...
    def token_text(self, token: int) -> bytes: ...


@dataclass(frozen=True)
class DraftCompatibility:
    """The verdict, with every reason a draft does not fit."""

    reasons: list[str] = field(default_factory=list)

    @property
    def compatible(self) -> bool:
        return not self.reasons

    def summary(self) -> str:
        return "compatible" if self.compatible else "; ".join(self.reasons)


def check_draft(target: VocabView, draft: VocabView) -> DraftCompatibility:
    reasons: list[str] = []
    if target.vocab_type != draft.vocab_type:
        reasons.append(f"vocabulary type differs (target {target.vocab_type}, draft {draft.vocab_type})")
    if target.add_bos != draft.add_bos:
        reasons.append(f"add-BOS flag differs (target {target.add_bos}, draft {draft.add_bos})")
    if target.add_eos != draft.add_eos:
        reasons.append(f"add-EOS flag differs (target {target.add_eos}, draft {draft.add_eos})")
    if target.add_bos and target.bos_id != draft.bos_id:
        reasons.append(f"BOS token differs (target {target.bos_id}, draft {draft.bos_id})")
    if target.add_eos and target.eos_id != draft.eos_id:
        reasons.append(f"EOS token differs (target {target.eos_id}, draft {draft.eos_id})")
    diff = abs(target.n_vocab - draft.n_vocab)
    if diff > MAX_VOCAB_SIZE_DIFF:
        reasons.append(
            f"vocabulary sizes differ by {diff} (target {target.n_vocab}, draft {draft.n_vocab}; at most {MAX_VOCAB_SIZE_DIFF})"
        )
    else:
        for token in range(FIRST_CHECKED_TOKEN, min(target.n_vocab, draft.n_vocab)):
            t_text, d_text = target.token_text(token), draft.token_text(token)
            if t_text != d_text:
                reasons.append(
                    f"token {token} differs (target {t_text.decode(errors='replace')!r}, "
                    f"draft {d_text.decode(errors='replace')!r}): a different tokenizer"
                )
                break
    return DraftCompatibility(reasons)
